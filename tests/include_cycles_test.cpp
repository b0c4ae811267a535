// design.md §12.1: no file-level cycles. A unit is a source file with its header (runner/x.h and
// runner/x.cpp; an internal header x_internal.h or x_state.h is part of x). One unit depends on
// another when one of its files includes one of the other's; a cycle is a set of units each of
// which reaches every other. The review of stage four found online_review <-> skill_runner, the
// suite files and history <-> run_measures <-> history_schema; they are gone. The cycles still
// here are listed, so that a new one fails and a removed one must leave the list.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/support/source_files.h"

namespace skillrunner {
namespace {

namespace fs = std::filesystem;
using Graph = std::map<std::string, std::set<std::string>>;
using Cycles = std::vector<std::vector<std::string>>;

std::string UnitOf(std::string path) {
  path = path.substr(0, path.rfind('.'));
  for (const std::string suffix : {"_internal", "_state"}) {
    if (path.ends_with(suffix)) path.resize(path.size() - suffix.size());
  }
  return path;
}

Graph IncludeGraph(const fs::path& root) {
  const std::regex include(R"re(^\s*#include "((runner|services)/[^"]+)")re");
  Graph graph;
  for (const auto& source : test_support::RunnerAndServicesSources(root)) {
    const std::string unit = UnitOf(source.path);
    graph[unit];
    std::ifstream in(source.file);
    std::smatch match;
    for (std::string line; std::getline(in, line);) {
      if (!std::regex_search(line, match, include)) continue;
      const std::string target = UnitOf(match[1].str());
      if (target != unit) graph[unit].insert(target);
    }
  }
  return graph;
}

// The strongly connected components of more than one unit (Tarjan), each sorted, in order.
Cycles CyclesOf(const Graph& graph) {
  std::map<std::string, int> index, low;
  std::vector<std::string> stack;
  std::set<std::string> on_stack;
  Cycles cycles;
  int next = 0;
  std::function<void(const std::string&)> visit = [&](const std::string& unit) {
    index[unit] = low[unit] = next++;
    stack.push_back(unit);
    on_stack.insert(unit);
    if (auto edges = graph.find(unit); edges != graph.end()) {
      for (const std::string& target : edges->second) {
        if (!index.contains(target)) {
          visit(target);
          low[unit] = std::min(low[unit], low[target]);
        } else if (on_stack.contains(target)) {
          low[unit] = std::min(low[unit], index[target]);
        }
      }
    }
    if (low[unit] != index[unit]) return;
    std::vector<std::string> component;
    std::string member;
    do {
      member = stack.back();
      stack.pop_back();
      on_stack.erase(member);
      component.push_back(member);
    } while (member != unit);
    if (component.size() < 2) return;
    std::sort(component.begin(), component.end());
    cycles.push_back(component);
  };
  for (const auto& [unit, edges] : graph) {
    if (!index.contains(unit)) visit(unit);
  }
  std::sort(cycles.begin(), cycles.end());
  return cycles;
}

TEST(IncludeCyclesTest, OnlyTheListedCyclesRemain) {
  const Cycles remaining = {
      // Server::State, the hub every server file reads (its split is still to come).
      {"runner/server/connection", "runner/server/listeners", "runner/server/methods", "runner/server/rpc_session",
       "runner/server/server"},
      // http_client.h holds the types every part of the client includes, and the client that uses them.
      {"services/http/connection", "services/http/connection_pool", "services/http/exchange",
       "services/http/exchange_stream", "services/http/http_client", "services/http/http_error",
       "services/http/proxy_config", "services/http/proxy_tunnel", "services/http/tls_context"},
  };
  EXPECT_EQ(CyclesOf(IncludeGraph(SKILLRUNNER_SOURCE_DIR)), remaining);
}

TEST(IncludeCyclesTest, TheCheckFindsACycleAndOnlyACycle) {
  const Graph graph = {{"a", {"b"}}, {"b", {"c"}}, {"c", {"a", "d"}}, {"d", {}}, {"e", {"d"}}};
  EXPECT_EQ(CyclesOf(graph), (Cycles{{"a", "b", "c"}}));
  EXPECT_EQ(UnitOf("runner/mcp/mcp_http_state.h"), "runner/mcp/mcp_http");
  EXPECT_EQ(UnitOf("services/generation/strict_schema_internal.h"), "services/generation/strict_schema");
}

}  // namespace
}  // namespace skillrunner
