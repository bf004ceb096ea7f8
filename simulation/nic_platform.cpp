// A SimGrid platform library (smpirun -platform libtributary_nic_platform.so): a cluster
// platform file (TRIBUTARY_NIC_PLATFORM) whose nodes each send through one network
// interface that injects one message at a time, TRIBUTARY_NIC_INJECTION seconds each
// (default 0.25 µs: 4 million messages per second). A message to another node leaves its
// node's interface after the messages queued before it; the wait is added to its latency
// (a latency-factor callback), so the sending rank does not wait, the message does. Messages
// within a node do not use the interface. What this adds to the platform file's links (each
// node's link shared by its ranks) is the per-message cost that makes sixteen ranks
// sending small messages at once through one interface slower than one: what the
// node-aware schedules save on real clusters (docs/simulation.md, "The platforms").
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

extern "C" void load_platform(const simgrid::s4u::Engine& e) {
  const char* base = std::getenv("TRIBUTARY_NIC_PLATFORM");
  if (!base || !*base)
    throw std::invalid_argument("libtributary_nic_platform: set TRIBUTARY_NIC_PLATFORM");
  e.load_platform(base);
  const char* inj = std::getenv("TRIBUTARY_NIC_INJECTION");
  const double injection = inj && *inj ? std::atof(inj) : 2.5e-7;
  // When each node's interface is next free, in simulated seconds.
  auto free_at = std::make_shared<std::unordered_map<const simgrid::s4u::Host*, double>>();
  e.get_netzone_root()->get_network_model()->set_lat_factor_cb(
      [free_at, injection](double, const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst,
                           const std::vector<simgrid::s4u::Link*>& links,
                           const std::unordered_set<simgrid::s4u::NetZone*>&) {
        if (src == dst || injection <= 0) return 1.0;
        double latency = 0;
        for (const auto* link : links) latency += link->get_latency();
        if (latency <= 0) return 1.0;
        const double now = simgrid::s4u::Engine::get_clock();
        double& next = (*free_at)[src];
        next = std::max(now, next) + injection;
        return (latency + (next - now)) / latency;
      });
}
