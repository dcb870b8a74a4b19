import CShims
import Glibc
import Synchronization

/// Per-call bookkeeping, on the trampoline's stack.
struct HookCallState {
    var insteadIndex = 0
    /// The class chain's instead-hooks, and those of both chains, counted once per call.
    var outerInsteadCount = 0
    var insteadCount = 0
    var proceeded = false
}

/// An immutable list of hooks for one method, replaced whole on every change.
final class HookChain: @unchecked Sendable {
    struct Entry {
        let id: UInt64
        let body: (HookContext) throws(RuntimeError) -> Void
        /// Set for a hook that removes itself after its first call: the call that claims it runs it.
        var once: OnceClaim? = nil

        /// Runs the body unless it is a one-shot hook another call already claimed; says whether
        /// it ran.
        @inline(__always) @discardableResult
        func run(_ ctx: HookContext) throws(RuntimeError) -> Bool {
            guard let once else {
                try body(ctx)
                return true
            }
            guard once.claim() else { return false }
            defer { HookRegistry.removeAfterFirstCall(id) }
            try body(ctx)
            return true
        }
    }

    let before: [Entry]
    /// Newest first.
    let instead: [Entry]
    let after: [Entry]

    /// In an object's own list (ObjectHookList): the selector this chain hooks, and the next
    /// selector's chain. nil in a class's chain.
    let selector: sf_sel?
    let next: HookChain?

    init(before: [Entry] = [], instead: [Entry] = [], after: [Entry] = [], selector: sf_sel? = nil, next: HookChain? = nil) {
        self.before = before
        self.instead = instead
        self.after = after
        self.selector = selector
        self.next = next
    }

    /// The same hooks as a node of an object's list.
    func linked(_ selector: sf_sel?, _ next: HookChain?) -> HookChain {
        HookChain(before: before, instead: instead, after: after, selector: selector, next: next)
    }

    var isEmpty: Bool { before.isEmpty && instead.isEmpty && after.isEmpty }

    func adding(_ e: Entry, at position: HookPosition) -> HookChain {
        switch position {
        case .before: HookChain(before: before + [e], instead: instead, after: after, selector: selector, next: next)
        case .instead: HookChain(before: before, instead: [e] + instead, after: after, selector: selector, next: next)
        case .after: HookChain(before: before, instead: instead, after: after + [e], selector: selector, next: next)
        }
    }

    func removing(_ id: UInt64) -> HookChain {
        HookChain(before: before.filter { $0.id != id }, instead: instead.filter { $0.id != id },
                  after: after.filter { $0.id != id }, selector: selector, next: next)
    }

    /// Every entry with its position: before hooks in order, instead hooks newest first, after.
    var listed: [(entry: Entry, position: HookPosition)] {
        before.map { ($0, .before) } + instead.map { ($0, .instead) } + after.map { ($0, .after) }
    }

    func contains(_ id: UInt64) -> Bool {
        before.contains { $0.id == id } || instead.contains { $0.id == id } || after.contains { $0.id == id }
    }
}

/// The first caller to claim it wins; every later claim fails.
final class OnceClaim: @unchecked Sendable {
    private let claimed = Atomic<Bool>(false)

    func claim() -> Bool {
        !claimed.load(ordering: .relaxed) && !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }
}
