import DynamicRuntime
import Synchronization

/// A record no limiter holds, kept for the next captured call: taken and given back with one
/// atomic operation each, without a lock. The record travels as a +1 word (the only place the
/// engine holds one so). It is emptied before it is kept: a spare that kept the previous call's
/// target, object arguments or returned object alive would keep an object with a rule from
/// being deallocated (and its rule from being discarded), and dropped arguments alive until
/// the next message.
struct SpareRecord: ~Copyable {
    private let word = Atomic<UnsafeMutableRawPointer?>(nil)

    /// The spare, if one is kept; the next `take()` finds none until one is offered.
    @inline(__always)
    func take() -> Invocation? {
        word.exchange(nil, ordering: .acquiring).map { Invocation.fromRetainedWord($0) }
    }

    /// Empties `record` (which nobody else holds) and keeps it, unless a spare is kept already.
    func offer(_ record: consuming Invocation) {
        guard word.load(ordering: .relaxed) == nil else { return }
        let retained = record.emptiedRetainedWord()
        if !word.compareExchange(expected: nil, desired: retained, ordering: .acquiringAndReleasing).exchanged {
            _ = Invocation.fromRetainedWord(retained)
        }
    }

    deinit {
        if let retained = word.exchange(nil, ordering: .acquiring) { _ = Invocation.fromRetainedWord(retained) }
    }
}
