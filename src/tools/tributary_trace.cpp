// tributary-trace: merges the per-rank timelines of a traced run (ContextOptions::trace,
// TRIBUTARY_TRACE=<prefix>, files <prefix>.<rank>.json) into one Chrome trace-event file
// that Perfetto and chrome://tracing open, and draws them as a PNG with gnuplot.
//
//   tributary-trace <prefix> [-o OUT]        OUT.json (merged) and OUT.png (timeline)
//   tributary-trace a.0.json a.1.json -o OUT [--from US] [--to US] [--no-png]
//
// Each rank's file says where its zero lies on the system clock (otherData.origin_unix_us);
// the merge shifts the ranks onto the earliest zero. The PNG has one row per rank and
// reduction object: the collect phase (armed until the last contribution), the combine,
// the network phase with its rounds, and a tick per list's contribution; --from / --to (µs
// from the earliest event) select a window.
// SimGrid SMPI forces a header into every file that defines exit(x) as a macro; it would
// rename CLI11's App::exit.
#ifdef exit
#undef exit
#endif
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

constexpr long kObjectLane = 1000000;  // src/core/trace.cpp: lanes from here on are objects

// nlohmann::json members, whose destructor does not throw, make the analysis assume that
// the implicit members may.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct RankFile {
  std::string path;
  json doc;
  int rank = 0;
  double origin = 0;  // µs on the system clock
};

std::vector<std::string> Expand(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& in : inputs) {
    if (in.size() > 5 && in.compare(in.size() - 5, 5, ".json") == 0) {
      files.push_back(in);
      continue;
    }
    // A prefix: <prefix>.0.json, <prefix>.1.json, ... until one is missing.
    for (int rank = 0;; ++rank) {
      const std::string path = in + "." + std::to_string(rank) + ".json";
      if (!std::ifstream(path)) break;
      files.push_back(path);
    }
    if (files.empty()) throw std::runtime_error("no file " + in + ".0.json");
  }
  return files;
}

RankFile Read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  RankFile f;
  f.path = path;
  try {
    f.doc = json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": not a complete trace (" + e.what() +
                             "); was its Context destroyed before the program ended?");
  }
  const json& other = f.doc.at("otherData");
  f.rank = other.at("rank").get<int>();
  f.origin = other.at("origin_unix_us").get<double>();
  return f;
}

// One bar of the PNG.
struct Bar {
  int row;
  double start, end;
};

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) out += (c == '\'' ? '"' : c);
  return out;
}

}  // namespace

// Every exception ends here, the option parser's included: a message and exit code 1.
int main(int argc, char** argv) try {
  CLI::App app{
      "Merges the per-rank timelines of a traced Tributary run (TRIBUTARY_TRACE=<prefix>) "
      "into OUT.json (Perfetto, chrome://tracing) and draws OUT.png with gnuplot."};
  std::vector<std::string> inputs;
  std::string out = "timeline";
  double from = 0, to = std::numeric_limits<double>::infinity();
  bool no_png = false;
  int width = 1400;
  app.add_option("inputs", inputs, "the trace prefix, or the ranks' .json files");
  app.add_option("-o,--output", out, "output name: OUT.json and OUT.png (default: timeline)");
  app.add_option("--from", from, "start of the drawn window, µs after the earliest event");
  app.add_option("--to", to, "end of the drawn window, µs after the earliest event");
  app.add_option("--width", width, "PNG width in pixels (default 1400)");
  app.add_flag("--no-png", no_png, "write OUT.json only");
  CLI11_PARSE(app, argc, argv);
  if (inputs.empty()) {
    std::fprintf(stderr, "tributary-trace: give the trace prefix or the ranks' files\n%s",
                 app.help().c_str());
    return 2;
  }

  try {
    std::vector<RankFile> ranks;
    for (const std::string& path : Expand(inputs)) ranks.push_back(Read(path));
    std::sort(ranks.begin(), ranks.end(),
              [](const RankFile& a, const RankFile& b) { return a.rank < b.rank; });
    double origin = std::numeric_limits<double>::infinity();
    for (const RankFile& f : ranks) origin = std::min(origin, f.origin);

    // The merge: every event shifted onto the common zero.
    json merged;
    merged["displayTimeUnit"] = "ns";
    merged["otherData"] = {
        {"tributary", "timeline"}, {"ranks", ranks.size()}, {"origin_unix_us", origin}};
    json& events = merged["traceEvents"] = json::array();
    double first = std::numeric_limits<double>::infinity();
    for (RankFile& f : ranks) {
      const double shift = f.origin - origin;
      for (json& e : f.doc.at("traceEvents")) {
        if (e.contains("ts")) {
          e["ts"] = e["ts"].get<double>() + shift;
          first = std::min(first, e["ts"].get<double>());
        }
        events.push_back(std::move(e));
      }
    }
    {
      std::ofstream o(out + ".json");
      o << merged.dump() << '\n';
      if (!o) throw std::runtime_error("cannot write " + out + ".json");
    }
    std::size_t timed = 0;
    for (const json& e : events) timed += e.contains("ts") ? 1 : 0;
    std::printf("tributary-trace: %zu rank(s), %zu events -> %s.json\n", ranks.size(), timed,
                out.c_str());
    if (no_png) return 0;

    // The PNG: a row per (rank, object), named from the lanes' metadata.
    std::map<std::pair<int, long>, std::string> lane_names;
    for (const json& e : events)
      if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name")
        lane_names[{e.at("pid").get<int>(), e.at("tid").get<long>()}] =
            e.at("args").at("name").get<std::string>();
    std::map<std::pair<int, long>, int> rows;  // (rank, object lane) -> row
    std::vector<std::string> row_names;
    std::map<std::string, std::vector<Bar>> bars;  // collect, combine, network, round
    std::vector<std::pair<double, int>> ticks;     // contributions
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    auto row_of = [&](int rank, long lane) {
      auto [it, added] = rows.try_emplace({rank, lane}, static_cast<int>(rows.size()));
      if (added) {
        auto name = lane_names.find({rank, lane});
        row_names.push_back("rank " + std::to_string(rank) + ": " +
                            (name != lane_names.end() ? name->second : "lane"));
      }
      return it->second;
    };
    // Rows in order of rank, then object.
    for (const auto& [key, name] : lane_names)
      if (key.second >= kObjectLane) row_of(key.first, key.second);
    for (const json& e : events) {
      if (!e.contains("ts")) continue;
      const double ts = e["ts"].get<double>() - first;
      const double dur = e.value("dur", 0.0);
      if (ts + dur < from || ts > to) continue;
      const int rank = e.at("pid").get<int>();
      const std::string ph = e.value("ph", "");
      const std::string name = e.value("name", "");
      if (ph == "X") {
        const long lane = e.at("tid").get<long>();
        std::string kind = name.rfind("round", 0) == 0     ? "round"
                           : name.rfind("network", 0) == 0 ? "network"
                                                           : name;
        bars[kind].push_back({row_of(rank, lane), ts, ts + dur});
      } else if (ph == "i" && e.contains("args") && e["args"].contains("object")) {
        // A contribution: drawn on its object's row.
        const std::string object = e["args"]["object"].get<std::string>();
        for (const auto& [key, lane_name] : lane_names)
          if (key.first == rank && key.second >= kObjectLane && lane_name == object) {
            ticks.emplace_back(ts, row_of(rank, key.second));
            break;
          }
      } else {
        continue;
      }
      lo = std::min(lo, ts);
      hi = std::max(hi, ts + dur);
    }
    if (rows.empty() || !(hi >= lo)) {
      std::printf("tributary-trace: nothing to draw in the window\n");
      return 0;
    }
    const std::string data = out + ".dat";
    {
      std::ofstream d(data);
      for (const char* kind : {"collect", "combine", "network", "round"}) {
        const double half = std::string(kind) == "round" ? 0.18 : 0.34;
        d << "# " << kind << "\n";
        for (const Bar& b : bars[kind])
          d << (b.start + b.end) / 2 << ' ' << b.row << ' ' << b.start << ' ' << b.end << ' '
            << b.row - half << ' ' << b.row + half << '\n';
        d << "0 -10 0 0 -10 -10\n\n\n";  // keeps every block non-empty (drawn off the plot)
      }
      d << "# contribution\n";
      for (const auto& [ts, row] : ticks) d << ts << ' ' << row << '\n';
      d << "0 -10\n";
    }
    std::ostringstream gp;
    const int height = std::max(240, 60 + 28 * static_cast<int>(rows.size()));
    gp << "set terminal pngcairo size " << width << "," << height << " font ',9' noenhanced\n"
       << "set output '" << Escape(out) << ".png'\n"
       << "set title 'Tributary timeline: " << ranks.size() << " rank(s)'\n"
       << "set xlabel 'time (us) from the first event'\n"
       << "set yrange [" << rows.size() << "-0.5:-0.5]\n"
       << "set xrange [" << lo << ":" << hi << "]\n"
       << "set style fill solid 0.85 noborder\nset grid x\nset key outside bottom horizontal\n"
       << "set ytics (";
    for (std::size_t r = 0; r < row_names.size(); ++r)
      gp << (r ? ", " : "") << "'" << Escape(row_names[r]) << "' " << r;
    gp << ")\n"
       << "plot '" << Escape(data) << "' index 0 with boxxyerror lc rgb '#c8c8c8' title 'collect', "
       << "'' index 1 with boxxyerror lc rgb '#f0a030' title 'combine', "
       << "'' index 2 with boxxyerror lc rgb '#6fa8dc' title 'network', "
       << "'' index 3 with boxxyerror lc rgb '#1c4587' title 'round', "
       << "'' index 4 using 1:2 with points pt 2 ps 0.8 lc rgb 'black' title 'contribution'\n";
    const std::string script = out + ".gp";
    {
      std::ofstream s(script);
      s << gp.str();
    }
    const std::string command = "gnuplot '" + Escape(script) + "'";
    if (std::system(command.c_str()) != 0)
      throw std::runtime_error("gnuplot failed on " + script + " (is gnuplot installed?)");
    std::printf("tributary-trace: %zu row(s), %.1f us -> %s.png\n", rows.size(), hi - lo,
                out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tributary-trace: %s\n", e.what());
    return 1;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s: %s\n", "tributary-trace", e.what());
  return 1;
} catch (...) {
  std::fprintf(stderr, "tributary-trace: an unknown exception\n");
  return 1;
}
