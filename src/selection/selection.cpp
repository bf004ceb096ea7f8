// The selection tree: loading and validation (nlohmann::json), pruning, evaluation.
// No MPI here: the loader is also built alone for fuzzing (scripts/fuzz-selection.sh).
#include "tributary/selection.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "tributary/errors.hpp"

namespace tributary {

namespace {

using Json = nlohmann::ordered_json;
using Pred = SelectionTree::Pred;

struct PredInfo {
  Pred pred;
  const char* key;
  bool fixed;  // known when the Context is created
};
constexpr PredInfo kPreds[] = {
    {Pred::collective, "collective", true}, {Pred::comm_size, "comm_size", true},
    {Pred::comm_type, "comm_type", true},   {Pred::ranks_per_node, "ranks_per_node", true},
    {Pred::node_count, "node_count", true}, {Pred::msg_size, "msg_size", false},
    {Pred::op_kind, "op_kind", false},      {Pred::commutative, "commutative", false},
    {Pred::memory, "memory", false},        {Pred::determinism, "determinism", false},
};
const PredInfo* FindPred(const std::string& key) {
  for (const auto& p : kPreds)
    if (key == p.key) return &p;
  return nullptr;
}
const PredInfo& InfoOf(Pred p) {
  for (const auto& i : kPreds)
    if (i.pred == p) return i;
  return kPreds[0];
}

constexpr const char* kCollectives[] = {"allreduce", "reduce", "allgather"};
constexpr const char* kDeterminism[] = {"fast", "run_to_run", "rank_count_independent"};

std::string Escape(const std::string& key) {  // RFC 6901
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

// What can reach a point of the tree: the collectives, and whether the operator may be
// non-commutative.
struct Reach {
  bool collective[3] = {true, true, true};
  bool noncommutative = true;
};

}  // namespace

// Builds a SelectionTree from JSON, checking every rule on the way.
class SelectionBuilder {
 public:
  explicit SelectionBuilder(std::string source) : source_(std::move(source)) {}

  SelectionTree Build(const Json& doc) {
    if (!doc.is_object()) Fail("", "the document must be an object with a \"tree\" array");
    for (auto it = doc.begin(); it != doc.end(); ++it)
      if (it.key() != "tree" && it.key() != "comment" && it.key() != "tributary_selection")
        Fail("/" + Escape(it.key()),
             "unknown key \"" + it.key() +
                 "\" (expected \"tree\", \"comment\", \"tributary_selection\")");
    if (doc.contains("tributary_selection") && (!doc["tributary_selection"].is_number_integer() ||
                                                doc["tributary_selection"].get<long long>() != 1))
      Fail("/tributary_selection", "unsupported format version (this library reads version 1)");
    if (!doc.contains("tree")) Fail("", "missing \"tree\"");
    tree_.root_ = List(doc["tree"], "/tree", Reach{}, 0);
    return std::move(tree_);
  }

 private:
  [[noreturn]] void Fail(const std::string& pointer, const std::string& what) const {
    throw UsageError(source_ + ": at JSON pointer \"" + pointer + "\": " + what);
  }

  // A "then" value or the tree: an array of operator nodes (siblings), or a leaf object.
  int List(const Json& j, const std::string& ptr, Reach reach, int depth) {
    if (depth > 64) Fail(ptr, "the tree is deeper than 64 levels");
    const int index = static_cast<int>(tree_.lists_.size());
    tree_.lists_.emplace_back();
    if (j.is_object()) {
      tree_.lists_[static_cast<std::size_t>(index)].leaf = true;
      tree_.lists_[static_cast<std::size_t>(index)].choice = Leaf(j, ptr, reach);
      return index;
    }
    if (!j.is_array() || j.empty())
      Fail(ptr, "expected a non-empty array of operator nodes, or a leaf object with \"schedule\"");
    // Siblings: one predicate kind, the last one "any".
    std::vector<std::pair<Pred, std::pair<int, std::int64_t>>> parsed;
    Pred kind = Pred::collective;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const std::string p = ptr + "/" + std::to_string(i);
      const Json& node = j[i];
      if (!node.is_object()) Fail(p, "an operator node must be an object");
      if (node.contains("schedule"))
        Fail(p + "/schedule",
             "a leaf among operator siblings: leaves belong at the bottom only, as the "
             "value of \"then\"");
      const PredInfo* info = nullptr;
      std::string key;
      for (auto it = node.begin(); it != node.end(); ++it) {
        if (it.key() == "then" || it.key() == "comment") continue;
        const PredInfo* found = FindPred(it.key());
        if (!found)
          Fail(p + "/" + Escape(it.key()),
               "unknown predicate \"" + it.key() +
                   "\" (known: collective, comm_size, comm_type, ranks_per_node, node_count, "
                   "msg_size, op_kind, commutative, memory, determinism)");
        if (info) Fail(p + "/" + Escape(it.key()), "an operator node has exactly one predicate");
        info = found;
        key = it.key();
      }
      if (!info) Fail(p, "an operator node needs a predicate and \"then\"");
      if (!node.contains("then")) Fail(p, "missing \"then\"");
      if (i == 0) kind = info->pred;
      if (info->pred != kind)
        Fail(p + "/" + Escape(key), "siblings must test one predicate: \"" +
                                        std::string(InfoOf(kind).key) + "\" before, \"" + key +
                                        "\" here");
      auto [form, value] = Value(info->pred, node[key], p + "/" + Escape(key));
      const bool any = form == 0;
      if (any && i + 1 != j.size())
        Fail(p + "/" + Escape(key),
             "\"any\" must be the last sibling (the ones after it are unreachable)");
      if (!any && i + 1 == j.size())
        Fail(p + "/" + Escape(key), "this level is incomplete: its last sibling must be \"any\"");
      parsed.push_back({info->pred, {form, value}});
    }
    // Children after the siblings' own list entries, so each list's nodes are contiguous.
    const int first = static_cast<int>(tree_.nodes_.size());
    for (const auto& [pred, fv] : parsed)
      tree_.nodes_.push_back({pred, static_cast<SelectionTree::Form>(fv.first), fv.second, -1});
    tree_.lists_[static_cast<std::size_t>(index)].first = first;
    tree_.lists_[static_cast<std::size_t>(index)].count = static_cast<int>(parsed.size());
    bool claimed[3] = {false, false, false};  // collectives taken by earlier siblings
    for (std::size_t i = 0; i < j.size(); ++i) {
      const auto& n = tree_.nodes_[static_cast<std::size_t>(first) + i];
      Reach below = reach;
      if (n.pred == Pred::collective) {
        for (int c = 0; c < 3; ++c) {
          const bool match = n.form == SelectionTree::Form::any || c == n.value;
          below.collective[c] = reach.collective[c] && match && !claimed[c];
          claimed[c] = claimed[c] || match;
        }
      }
      if ((n.pred == Pred::commutative && n.form == SelectionTree::Form::eq && n.value == 1) ||
          (n.pred == Pred::op_kind && n.form == SelectionTree::Form::eq && n.value == 1))
        below.noncommutative = false;  // commutative, or a builtin operator (all commute)
      const int child =
          List(j[i]["then"], ptr + "/" + std::to_string(i) + "/then", below, depth + 1);
      tree_.nodes_[static_cast<std::size_t>(first) + i].then = child;
    }
    return index;
  }

  // Returns (form, value): form 0 any, 1 le, 2 pow2, 3 eq.
  std::pair<int, std::int64_t> Value(Pred pred, const Json& v, const std::string& ptr) const {
    if (v.is_string() && v.get<std::string>() == "any") return {0, 0};
    switch (pred) {
      case Pred::collective:
        if (v.is_string())
          for (int c = 0; c < 3; ++c)
            if (v.get<std::string>() == kCollectives[c]) return {3, c};
        Fail(ptr, "expected \"allreduce\", \"reduce\", \"allgather\" or \"any\"");
      case Pred::comm_type:
        if (v.is_string() && v.get<std::string>() == "intra") return {3, 0};
        if (v.is_string() && v.get<std::string>() == "inter")
          Fail(ptr,
               "\"inter\": intercommunicators are not supported (a Context is always over an "
               "intracommunicator)");
        Fail(ptr, "expected \"intra\" or \"any\"");
      case Pred::comm_size:
        if (v.is_string() && v.get<std::string>() == "pow2") return {2, 0};
        [[fallthrough]];
      case Pred::ranks_per_node:
      case Pred::node_count:
      case Pred::msg_size: {
        if (v.is_string()) {
          std::string s = v.get<std::string>();
          s.erase(
              std::remove_if(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); }),
              s.end());
          if (s.rfind("<=", 0) == 0) {
            const std::int64_t n = Number(s.substr(2), pred == Pred::msg_size, ptr);
            return {1, n};
          }
        }
        Fail(ptr, std::string("expected \"<= N\"") + (pred == Pred::comm_size ? ", \"pow2\"" : "") +
                      (pred == Pred::msg_size ? " (bytes; KiB, MiB, GiB allowed)" : "") +
                      " or \"any\"");
      }
      case Pred::op_kind:
        if (v.is_string() && v.get<std::string>() == "user") return {3, 0};
        if (v.is_string() && v.get<std::string>() == "builtin") return {3, 1};
        Fail(ptr, "expected \"builtin\", \"user\" or \"any\"");
      case Pred::commutative:
        if (v.is_boolean()) return {3, v.get<bool>() ? 1 : 0};
        Fail(ptr, "expected true, false or \"any\"");
      case Pred::memory:
        if (v.is_string() && v.get<std::string>() == "host") return {3, 0};
        if (v.is_string() && v.get<std::string>() == "device") return {3, 1};
        Fail(ptr, "expected \"host\", \"device\" or \"any\"");
      case Pred::determinism:
        if (v.is_string())
          for (int d = 0; d < 3; ++d)
            if (v.get<std::string>() == kDeterminism[d]) return {3, d};
        Fail(ptr, "expected \"fast\", \"run_to_run\", \"rank_count_independent\" or \"any\"");
    }
    Fail(ptr, "bad value");
  }

  std::int64_t Number(const std::string& s, bool bytes, const std::string& ptr) const {
    std::size_t i = 0;
    std::int64_t n = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (n > (std::numeric_limits<std::int64_t>::max() - 9) / 10 / (1 << 30))
        Fail(ptr, "number too large");
      n = n * 10 + (s[i++] - '0');
    }
    if (i == 0) Fail(ptr, "expected a number after \"<=\"");
    const std::string unit = s.substr(i);
    if (unit.empty()) return n;
    if (bytes && unit == "KiB") return n << 10;
    if (bytes && unit == "MiB") return n << 20;
    if (bytes && unit == "GiB") return n << 30;
    Fail(ptr, "unknown unit \"" + unit + "\"");
  }

  SelectionChoice Leaf(const Json& j, const std::string& ptr, const Reach& reach) const {
    SelectionChoice c;
    if (!j.contains("schedule"))
      Fail(ptr, "a leaf needs \"schedule\" (or use an array of operator nodes)");
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      const std::string p = ptr + "/" + Escape(k);
      if (k == "comment") continue;
      if (k == "schedule") {
        if (!it->is_string() || !ParseScheduleKind(it->get<std::string>(), &c.kind))
          Fail(p,
               "unknown schedule " + it->dump() +
                   " (known: mpi_library, binomial, knomial, pipelined_tree, recursive_doubling, "
                   "rabenseifner, ring, reduce_bcast, reduce_scatter_gather, "
                   "recursive_multiplying)");
      } else if (k == "radix") {
        if (!it->is_number_integer() || it->get<long long>() < 2 || it->get<long long>() > 1024)
          Fail(p, "radix must be an integer from 2 to 1024");
        c.params.radix = static_cast<int>(it->get<long long>());
      } else if (k == "segment_bytes") {
        if (!it->is_number_integer() || it->get<long long>() < 1 ||
            it->get<long long>() > (1LL << 30))
          Fail(p, "segment_bytes must be an integer from 1 to 2^30");
        c.params.segment_bytes = static_cast<std::size_t>(it->get<long long>());
      } else if (k == "node_aware") {
        if (!it->is_boolean()) Fail(p, "node_aware must be true or false");
        c.params.node_aware = it->get<bool>();
      } else if (FindPred(k) || k == "then") {
        Fail(p, "a leaf cannot hold \"" + k + "\": leaves belong at the bottom only");
      } else {
        Fail(p, "unknown leaf key \"" + k +
                    "\" (schedule, radix, segment_bytes, node_aware, comment)");
      }
    }
    const std::string sp = ptr + "/schedule";
    for (int col = 0; col < 3; ++col)
      if (reach.collective[col] && !Supports(c.kind, static_cast<Collective>(col)))
        Fail(sp, std::string("schedule '") + ToString(c.kind) + "' does not implement " +
                     kCollectives[col] +
                     ", which can reach this leaf (add a \"collective\" branch above it)");
    // An allgather combines nothing: only a reduction's operator can need rank order.
    const bool reduces = reach.collective[static_cast<int>(Collective::allreduce)] ||
                         reach.collective[static_cast<int>(Collective::reduce)];
    if (reach.noncommutative && reduces && !IsOrderKeeping(c.kind))
      Fail(sp, std::string("schedule '") + ToString(c.kind) +
                   "' does not keep rank order, and a non-commutative operator can reach this leaf "
                   "(put it under \"commutative\": true)");
    if (c.params.node_aware && c.kind == ScheduleKind::mpi_library)
      Fail(ptr + "/node_aware",
           "the node-aware form needs one of Tributary's own schedules, not mpi_library");
    return c;
  }

  std::string source_;
  SelectionTree tree_;
};

SelectionTree SelectionTree::Parse(const std::string& text, const std::string& source) {
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // Line and column of the byte where parsing stopped.
    const std::size_t at = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < at; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    const auto colon = what.rfind(": ");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw UsageError(source + ":" + std::to_string(line) + ":" + std::to_string(column) +
                     ": JSON syntax error: " + what);
  } catch (const Json::exception& e) {
    // The parser's other refusals (a number that overflows, found by fuzzing) carry no
    // position; nlohmann's message names the offending text.
    std::string what = e.what();
    const auto bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    throw UsageError(source + ": JSON error: " + what);
  }
  return SelectionBuilder(source).Build(doc);
}

bool SelectionTree::Matches(const Node& n, const SelectionInput& in) const noexcept {
  if (n.form == Form::any) return true;
  switch (n.pred) {
    case Pred::collective:
      return n.value == static_cast<std::int64_t>(collective_);
    case Pred::comm_size:
      return n.form == Form::pow2 ? (facts_.comm_size & (facts_.comm_size - 1)) == 0
                                  : facts_.comm_size <= n.value;
    case Pred::comm_type:
      return true;  // always intra
    case Pred::ranks_per_node:
      return facts_.ranks_per_node <= n.value;
    case Pred::node_count:
      return facts_.node_count <= n.value;
    case Pred::msg_size:
      return static_cast<std::int64_t>(in.bytes) <= n.value;
    case Pred::op_kind:
      return n.value == (in.builtin_op ? 1 : 0);
    case Pred::commutative:
      return n.value == (in.commutative ? 1 : 0);
    case Pred::memory:
      return n.value == static_cast<std::int64_t>(in.memory);
    case Pred::determinism:
      return n.value == in.determinism;
  }
  return false;
}

int SelectionTree::PruneList(const SelectionTree& from, int list, const SelectionFacts& facts,
                             Collective c) {
  const List& l = from.lists_[static_cast<std::size_t>(list)];
  if (l.leaf) {
    lists_.push_back(l);
    return static_cast<int>(lists_.size()) - 1;
  }
  const Node& head = from.nodes_[static_cast<std::size_t>(l.first)];
  if (InfoOf(head.pred).fixed) {
    // Fixed for this communicator: the first sibling that matches replaces the level.
    for (int k = 0; k < l.count; ++k) {
      const Node& n = from.nodes_[static_cast<std::size_t>(l.first) + static_cast<std::size_t>(k)];
      if (from.Matches(n, SelectionInput{})) return PruneList(from, n.then, facts, c);
    }
  }
  const int index = static_cast<int>(lists_.size());
  lists_.emplace_back();
  std::vector<Node> kept(from.nodes_.begin() + l.first, from.nodes_.begin() + l.first + l.count);
  const int first = static_cast<int>(nodes_.size());
  nodes_.insert(nodes_.end(), kept.begin(), kept.end());
  lists_[static_cast<std::size_t>(index)].first = first;
  lists_[static_cast<std::size_t>(index)].count = l.count;
  for (int k = 0; k < l.count; ++k) {
    const int child = PruneList(from, kept[static_cast<std::size_t>(k)].then, facts, c);
    nodes_[static_cast<std::size_t>(first) + static_cast<std::size_t>(k)].then = child;
  }
  return index;
}

SelectionTree SelectionTree::Prune(const SelectionFacts& facts, Collective collective) const {
  SelectionTree with_facts = *this;  // Matches reads the facts from the tree it runs on
  with_facts.facts_ = facts;
  with_facts.collective_ = collective;
  SelectionTree out;
  out.facts_ = facts;
  out.collective_ = collective;
  out.pruned_ = true;
  out.root_ = out.PruneList(with_facts, root_, facts, collective);
  return out;
}

SelectionChoice SelectionTree::Select(const SelectionInput& in) const {
  int list = root_;
  for (;;) {
    const List& l = lists_[static_cast<std::size_t>(list)];
    if (l.leaf) return l.choice;
    int next = -1;
    for (int k = 0; k < l.count; ++k) {
      const Node& n = nodes_[static_cast<std::size_t>(l.first) + static_cast<std::size_t>(k)];
      if (Matches(n, in)) {
        next = n.then;
        break;
      }
    }
    if (next < 0) return l.choice;  // unreachable: every level ends in "any"
    list = next;
  }
}

std::string SelectionTree::ToJson(int indent) const {
  const auto value = [](const Node& n) -> Json {
    if (n.form == Form::any) return "any";
    if (n.form == Form::pow2) return "pow2";
    if (n.form == Form::le) {
      if (n.pred == Pred::msg_size) {
        if (n.value && n.value % (1LL << 20) == 0)
          return "<= " + std::to_string(n.value >> 20) + "MiB";
        if (n.value && n.value % (1LL << 10) == 0)
          return "<= " + std::to_string(n.value >> 10) + "KiB";
      }
      return "<= " + std::to_string(n.value);
    }
    switch (n.pred) {
      case Pred::collective:
        return kCollectives[n.value];
      case Pred::comm_type:
        return "intra";
      case Pred::op_kind:
        return n.value ? "builtin" : "user";
      case Pred::commutative:
        return n.value != 0;
      case Pred::memory:
        return n.value ? "device" : "host";
      case Pred::determinism:
        return kDeterminism[n.value];
      default:
        return n.value;
    }
  };
  std::function<Json(int)> list = [&](int index) -> Json {
    const List& l = lists_[static_cast<std::size_t>(index)];
    if (l.leaf) {
      Json leaf;
      leaf["schedule"] = ToString(l.choice.kind);
      if (TakesRadix(l.choice.kind)) leaf["radix"] = l.choice.params.radix;
      if (l.choice.kind == ScheduleKind::ring || l.choice.kind == ScheduleKind::pipelined_tree)
        leaf["segment_bytes"] = l.choice.params.segment_bytes;
      if (l.choice.params.node_aware) leaf["node_aware"] = true;
      return leaf;
    }
    Json arr = Json::array();
    for (int k = 0; k < l.count; ++k) {
      const Node& n = nodes_[static_cast<std::size_t>(l.first) + static_cast<std::size_t>(k)];
      Json node;
      node[InfoOf(n.pred).key] = value(n);
      node["then"] = list(n.then);
      arr.push_back(node);
    }
    return arr;
  };
  Json doc;
  doc["tributary_selection"] = 1;
  if (pruned_)
    doc["comment"] = std::string("pruned for ") + kCollectives[static_cast<int>(collective_)] +
                     " on " + std::to_string(facts_.comm_size) + " ranks, " +
                     std::to_string(facts_.node_count) + " node(s) of at most " +
                     std::to_string(facts_.ranks_per_node) + " ranks";
  Json tree = list(root_);
  if (pruned_)  // loadable again: the pruned collective, and the MPI library for the others
    tree = Json::array(
        {Json{{"collective", kCollectives[static_cast<int>(collective_)]}, {"then", tree}},
         Json{{"collective", "any"}, {"then", Json{{"schedule", "mpi_library"}}}}});
  else if (!tree.is_array())
    tree = Json::array({Json{{"msg_size", "any"}, {"then", tree}}});
  doc["tree"] = tree;
  return doc.dump(indent);
}

}  // namespace tributary
