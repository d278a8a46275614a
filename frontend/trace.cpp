#include "blocc/trace.h"

#include <string_view>

namespace blocc::detail {

namespace {
thread_local TraceContext *current_context = nullptr;

std::string base_name(const char *path) {
  std::string s(path);
  auto slash = s.find_last_of('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

/// Whether `loc` is in blocc's own sources: this directory (the language's
/// .cpp files) or below it (its headers, blocc/*.h), as this build names
/// them.
bool in_blocc_sources(const std::source_location &loc) {
  static const std::string directory = [] {
    std::string file = std::source_location::current().file_name();
    return file.substr(0, file.find_last_of('/') + 1);
  }();
  return !directory.empty() &&
         std::string_view(loc.file_name()).starts_with(directory);
}

/// `loc` as the user wrote it, where a trace runs (TraceContext::
/// user_facing).
std::source_location user_facing(const std::source_location &loc) {
  TraceContext *context = current_context;
  return context ? context->user_facing(loc) : loc;
}
} // namespace

std::string where(const std::source_location &loc) {
  const std::source_location user = user_facing(loc);
  return base_name(user.file_name()) + ":" + std::to_string(user.line());
}

ir::Location to_ir_location(const std::source_location &loc) {
  return ir::Location{base_name(loc.file_name()), static_cast<int>(loc.line())};
}

void user_error(const std::source_location &loc, const std::string &message) {
  throw Error(where(loc) + ": error: " + message);
}

std::source_location
TraceContext::user_facing(const std::source_location &loc) {
  if (!in_blocc_sources(loc))
    return *(user_location_ = loc);
  return user_location_ ? *user_location_ : loc;
}

TraceContext::TraceContext(ir::Function &function)
    : function_(function), builder_(&function.body()),
      previous_(current_context) {
  current_context = this;
}

TraceContext::~TraceContext() {
  // Variables that outlive the trace (kept by the user in a static, say)
  // must point neither at a dead context nor into a function that later
  // passes rewrite: reading one later is a clear error instead.
  for (auto &[id, t] : variables_) {
    t->context_ = nullptr;
    t->value_ = nullptr;
    t->poison_ =
        "this Tensor was made while tracing kernel '" + function_.name() +
        "', and a Tensor lives only while its kernel is traced; it cannot be "
        "used by another kernel or a later trace. Keep plain C++ values "
        "(or pass them as bl::Const parameters) across kernels instead";
  }
  current_context = previous_;
}

TraceContext &TraceContext::current(const std::source_location &loc) {
  if (!current_context)
    user_error(loc, "blocc operations can only be used inside a kernel body "
                    "while it is traced (a callable passed to "
                    "bl::kernel and launched or compiled)");
  return *current_context;
}

TraceContext *TraceContext::current_or_null() { return current_context; }

ir::Builder &TraceContext::at(const std::source_location &loc) {
  builder_.set_location(to_ir_location(user_facing(loc)));
  return builder_;
}

std::vector<TraceContext::Binding> TraceContext::bindings() const {
  std::vector<Binding> out;
  out.reserve(variables_.size());
  for (const auto &[id, t] : variables_)
    out.push_back({id, t->value_});
  return out;
}

Tensor *TraceContext::variable(uint64_t id) const {
  auto it = variables_.find(id);
  return it == variables_.end() ? nullptr : it->second;
}

void TraceContext::poison(Tensor &t, std::string why) {
  t.value_ = nullptr;
  t.poison_ = std::move(why);
}

void TraceContext::defer_error(std::string message) {
  if (deferred_error_.empty())
    deferred_error_ = std::move(message);
}

ir::Value *TraceContext::value_before_loops(ir::Value *v) const {
  for (auto it = tentative_outer_.find(v);
       it != tentative_outer_.end() && it->second;
       it = tentative_outer_.find(v))
    v = it->second;
  return v;
}

void TraceContext::require_loop_invariant(ir::Value *v, std::string message) {
  if (tentative_outer_.count(v))
    invariance_required_[v].push_back(std::move(message));
}

void TraceContext::begin_tentative(ir::Value *argument, ir::Value *outer) {
  tentative_outer_[argument] = outer;
}

void TraceContext::end_tentative(ir::Value *argument, bool folded) {
  ir::Value *outer = tentative_outer_[argument];
  tentative_outer_.erase(argument);
  auto it = invariance_required_.find(argument);
  if (it == invariance_required_.end())
    return;
  std::vector<std::string> messages = std::move(it->second);
  invariance_required_.erase(it);
  // Kept: the enclosing loop's argument, where the outer value is one,
  // must stay unchanged in its turn.
  for (std::string &message : messages) {
    if (!folded)
      defer_error(message);
    else if (outer)
      require_loop_invariant(outer, std::move(message));
  }
}

void TraceContext::register_variable(Tensor &t) {
  t.context_ = this;
  t.id_ = next_id_++;
  variables_[t.id_] = &t;
}

void TraceContext::unregister_variable(Tensor &t) { variables_.erase(t.id_); }

} // namespace blocc::detail
