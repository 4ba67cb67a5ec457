// src/core/intrusive_list.hpp — a doubly linked list threaded through its elements
// (TCMalloc's linked_list.h idea, own code): the one list the pool's page filler
// (src/pool/page_filler.hpp), the malloc's huge-page lists (src/malloc/heap.hpp) and its
// central partial-span lists (src/malloc/central.cpp) use.
//
// Contract:
// - The element carries the links: two members `T* prev` and `T* next` (or any two T*
//   members named by the template arguments). An element is on at most one list through
//   one pair of links at a time; which list, if any, is the caller's business (both
//   users keep a list number in the element).
// - Every operation is O(1) (push, remove, front, back, size), noexcept, allocates
//   nothing, takes no lock and calls nothing: usable from the malloc before constructors
//   run, inside its fork handlers and from a signal handler that holds the caller's lock.
// - A list is constant-initialised (constexpr constructor, all null): a global of it
//   (the malloc's constinit Heap) needs no constructor.
// - remove(x) leaves x's links null. Removing an element that is not on this list is
//   undefined (no check here: an assert's message would allocate inside the malloc).
#pragma once

#include <cstddef>

namespace physmem::core {

template <class T, T* T::*Prev = &T::prev, T* T::*Next = &T::next>
class IntrusiveList {
  public:
    constexpr IntrusiveList() noexcept = default;

    T* front() const noexcept { return head_; }
    T* back() const noexcept { return tail_; }
    bool empty() const noexcept { return head_ == nullptr; }
    std::size_t size() const noexcept { return size_; }

    // The element after / before x on its list, nullptr at the end.
    static T* next(const T* x) noexcept { return x->*Next; }
    static T* prev(const T* x) noexcept { return x->*Prev; }

    // pre: x on no list.
    void push_front(T* x) noexcept {
        x->*Prev = nullptr;
        x->*Next = head_;
        (head_ ? head_->*Prev : tail_) = x;
        head_ = x;
        ++size_;
    }

    // pre: x on no list.
    void push_back(T* x) noexcept {
        x->*Next = nullptr;
        x->*Prev = tail_;
        (tail_ ? tail_->*Next : head_) = x;
        tail_ = x;
        ++size_;
    }

    // pre: x on this list.
    void remove(T* x) noexcept {
        (x->*Prev ? x->*Prev->*Next : head_) = x->*Next;
        (x->*Next ? x->*Next->*Prev : tail_) = x->*Prev;
        x->*Prev = x->*Next = nullptr;
        --size_;
    }

    // The first element, taken off; nullptr when empty.
    T* pop_front() noexcept {
        T* x = head_;
        if (x) remove(x);
        return x;
    }

  private:
    T* head_ = nullptr;
    T* tail_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace physmem::core
