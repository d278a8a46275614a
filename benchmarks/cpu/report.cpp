#include "report.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace bench {

namespace {

std::string number(double v, int digits = 3) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", digits, v);
  return text;
}

std::string shape_text(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string json_number(std::optional<double> v) {
  if (!v || !std::isfinite(*v))
    return "null";
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", *v);
  return text;
}

} // namespace

std::optional<double> Record::ratio() const {
  if (!peer_value || *peer_value <= 0 || blocc <= 0)
    return std::nullopt;
  return higher_is_better ? blocc / *peer_value : *peer_value / blocc;
}

std::string Record::bar() const {
  if (min_ratio)
    return ">= " + number(*min_ratio, 2) + "x";
  if (max_value)
    return "< " + number(*max_value, 3) + " " + metric;
  return "";
}

std::optional<bool> Record::meets_bar() const {
  if (min_ratio) {
    auto r = ratio();
    return r && *r >= *min_ratio;
  }
  if (max_value)
    return blocc < *max_value;
  return std::nullopt;
}

void Report::print_table() const {
  std::printf("\n%s\n%d threads, %s\n\n", hardware.c_str(), threads,
              date.c_str());
  std::printf("%-14s %-15s %-8s %9s  %-26s %9s %7s  %-9s %s\n", "kernel",
              "shape", "metric", "blocc", "peer", "peer", "ratio", "bar",
              "met");
  for (const Record &r : records) {
    auto ratio = r.ratio();
    auto met = r.meets_bar();
    std::printf("%-14s %-15s %-8s %9s  %-26s %9s %7s  %-9s %s\n",
                r.kernel.c_str(), shape_text(r.shape).c_str(), r.metric.c_str(),
                number(r.blocc).c_str(), r.peer.c_str(),
                r.peer_value ? number(*r.peer_value).c_str() : "-",
                ratio ? (number(*ratio, 2) + "x").c_str() : "-",
                r.bar().c_str(), met ? (*met ? "yes" : "NO") : "");
  }
  std::printf("\nblocc launch configurations:\n");
  for (const Record &r : records)
    if (!r.config.empty())
      std::printf("  %-14s %-15s vs %-26s %s\n", r.kernel.c_str(),
                  shape_text(r.shape).c_str(), r.peer.c_str(),
                  r.config.c_str());
  for (const std::string &note : notes)
    std::printf("note: %s\n", note.c_str());
}

void Report::write_json(const std::string &path) const {
  std::ostringstream out;
  out << "{\"suite\": \"cpu\", \"hardware\": " << json_string(hardware)
      << ", \"threads\": " << threads << ", \"date\": " << json_string(date)
      << ", \"command\": " << json_string(command) << ",\n \"results\": [";
  for (size_t i = 0; i < records.size(); ++i) {
    const Record &r = records[i];
    out << (i ? ",\n  " : "\n  ") << "{\"kernel\": " << json_string(r.kernel)
        << ", \"shape\": [";
    for (size_t d = 0; d < r.shape.size(); ++d)
      out << (d ? ", " : "") << r.shape[d];
    out << "], \"dtype\": " << json_string(r.dtype)
        << ", \"metric\": " << json_string(r.metric)
        << ", \"blocc\": " << json_number(r.blocc)
        << ", \"peer\": " << json_string(r.peer)
        << ", \"peer_value\": " << json_number(r.peer_value)
        << ", \"ratio\": " << json_number(r.ratio())
        << ", \"config\": " << json_string(r.config)
        << ", \"bar\": " << json_string(r.bar()) << ", \"meets_bar\": ";
    auto met = r.meets_bar();
    out << (met ? (*met ? "true" : "false") : "null") << "}";
  }
  out << "\n ],\n \"notes\": [";
  for (size_t i = 0; i < notes.size(); ++i)
    out << (i ? ", " : "") << json_string(notes[i]);
  out << "]}\n";
  std::filesystem::path target(path);
  if (target.has_parent_path())
    std::filesystem::create_directories(target.parent_path());
  std::ofstream file(path);
  file << out.str();
  if (!file)
    throw std::runtime_error("cannot write " + path);
}

} // namespace bench
