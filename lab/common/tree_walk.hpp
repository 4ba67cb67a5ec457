// lab/common/tree_walk.hpp — the random-access programs' "walk" parameter, declared once.
//
// walk=loop reads a TreeArray through its own operator[] (a level loop over the stored
// depth); walk=fixed through physmem::with_fixed_depth's view (straight-line code, the
// seed blog's "No Branches" walk). Default: fixed.
#pragma once

#include <utility>

#include "physmem/fixed_depth.hpp"
#include "settings.hpp"

namespace lab {

inline ParamSpec walk_param() {
    return {"walk", "fixed", {"loop", "fixed"},
            "tree-index: operator[]'s level loop or with_fixed_depth's straight-line walk"};
}

// Calls f(access) once, access being the tree itself or its fixed-depth view, as the
// "walk" parameter of `s` says. pre: walk_param() is declared in the program's spec.
template <class T, class F>
void with_walk(const Settings& s, physmem::TreeArray<T>& t, F&& f) {
    if (s.param("walk") == "fixed")
        physmem::with_fixed_depth(t, [&](auto view) { f(view); });
    else
        f(t);
}

}  // namespace lab
