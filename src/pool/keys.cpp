// src/pool/keys.cpp — PoolOptions::protection_keys: each region the pool maps goes under
// its domain's protection key (physmem/domain.hpp), or the pool records why not and keeps
// to the software checks. The pool itself never reads or writes its blocks' bytes (its
// bookkeeping is out of band), so keying its memory does not get in its own way; the
// regions are keyed after any prefault, which writes them.
#include <cstring>
#include <string>

#include "physmem/domain.hpp"
#include "physmem/pool.hpp"
#include "port/os.hpp"
#include "slab.hpp"

namespace physmem {

// Called from add_region, before the region's blocks can be handed out: on the first
// region from the constructor, on later ones under the lock (grow_locked).
void BlockPool::key_region(Slab& s) {
    if (slabs_.empty()) {  // the first region decides
        std::string why;
        keys_.key = domain_key(options_.domain, &why);
        keys_.on = keys_.key > 0;
        keys_.why = keys_.on ? "" : why;
    }
    if (!keys_.on) return;
    int rc = os::pkey_protect(s.region.data(), s.region.size(), keys_.key);
    if (rc == 0) return;
    keys_.on = false;
    keys_.why = "pkey_mprotect of region " + std::to_string(slabs_.size() + 1) + " (" +
                std::to_string(s.region.size() >> 20) + " MiB): " + std::strerror(rc) +
                "; the regions keyed before stay keyed";
}

BlockPool::KeyEnforcement BlockPool::key_enforcement() const {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!options_.protection_keys) return {false, -1, "PoolOptions::protection_keys is off"};
    return keys_;
}

}  // namespace physmem
