#include "synk/core/backend.h"

#include "synk/core/error.h"
#include "synk/core/host_link.h"

namespace synk {

std::unique_ptr<Backend> createBackend(BackendFactory& factory, RankEnvironment& env) {
  factory.linkHost(hostLink());
  return factory.create(env);
}

void BackendRegistry::add(std::unique_ptr<BackendFactory> factory) {
  SYNK_CHECK(factory != nullptr);
  if (find(factory->name())) {
    throw InvalidArgument(str("backend '", factory->name(), "' is registered twice"));
  }
  factories_.push_back(std::move(factory));
}

BackendFactory* BackendRegistry::find(const std::string& name) const {
  for (const auto& factory : factories_) {
    if (factory->name() == name) return factory.get();
  }
  return nullptr;
}

std::vector<std::string> BackendRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& factory : factories_)
    out.push_back(factory->name());
  return out;
}

}  // namespace synk
