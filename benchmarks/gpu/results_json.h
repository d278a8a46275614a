// The JSON the GPU benchmark programs write (the results format,
// benchmarks/README.md):
// one record per measured configuration, blocc's value next to the peer
// measured in the same run (the device copy for bandwidths, raw
// cuLaunchKernel for launch overhead). benchmarks/gpu/report.py merges
// these files with the Python peers' into one table and gpu.json.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

namespace gpu_bench {

struct Record {
  std::string kernel, config, dtype = "f32";
  std::vector<int64_t> shape;
  std::string metric = "GB/s"; // or "us", "ms"
  bool higher_is_better = true;
  double blocc = 0;
  std::string peer = "cuMemcpyDtoD (ceiling)";
  double peer_value = 0; // 0: none measured
};

inline std::string json_text(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      continue;
    out += c;
  }
  return out + "\"";
}

inline std::string json_value(double v) {
  if (!std::isfinite(v) || v <= 0)
    return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

/// Writes `records` to `path`; false when the file cannot be written.
inline bool write_results(const std::string &path, const std::string &hardware,
                          const std::string &command,
                          const std::vector<Record> &records) {
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::ofstream out(path);
  out << "{\"suite\": \"gpu\", \"hardware\": " << json_text(hardware)
      << ", \"date\": \"" << date << "\", \"command\": " << json_text(command)
      << ",\n \"results\": [\n";
  for (size_t i = 0; i < records.size(); ++i) {
    const Record &r = records[i];
    double ratio = 0;
    if (r.peer_value > 0 && r.blocc > 0)
      ratio =
          r.higher_is_better ? r.blocc / r.peer_value : r.peer_value / r.blocc;
    out << "  {\"kernel\": " << json_text(r.kernel)
        << ", \"config\": " << json_text(r.config) << ", \"shape\": [";
    for (size_t d = 0; d < r.shape.size(); ++d)
      out << (d ? ", " : "") << r.shape[d];
    out << "], \"dtype\": " << json_text(r.dtype)
        << ", \"metric\": " << json_text(r.metric)
        << ", \"higher_is_better\": " << (r.higher_is_better ? "true" : "false")
        << ", \"blocc\": " << json_value(r.blocc)
        << ", \"peer\": " << json_text(r.peer)
        << ", \"peer_value\": " << json_value(r.peer_value)
        << ", \"ratio\": " << json_value(ratio) << "}"
        << (i + 1 < records.size() ? "," : "") << "\n";
  }
  out << "]}\n";
  return static_cast<bool>(out);
}

} // namespace gpu_bench
