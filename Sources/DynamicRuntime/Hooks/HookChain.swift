import CShims
import Glibc
import Synchronization

/// Per-call bookkeeping, on the trampoline's stack.
struct HookCallState {
    var insteadIndex = 0
    /// The chain's instead-hooks, counted once per call.
    var insteadCount = 0
    var proceeded = false
}

/// An immutable list of hooks for one method, replaced whole on every change.
final class HookChain: @unchecked Sendable {
    struct Entry {
        let id: UInt64
        let body: (HookContext) throws(RuntimeError) -> Void
    }

    let before: [Entry]
    /// Newest first.
    let instead: [Entry]
    let after: [Entry]

    init(before: [Entry] = [], instead: [Entry] = [], after: [Entry] = []) {
        self.before = before
        self.instead = instead
        self.after = after
    }

    var isEmpty: Bool { before.isEmpty && instead.isEmpty && after.isEmpty }

    func adding(_ e: Entry, at position: HookPosition) -> HookChain {
        switch position {
        case .before: HookChain(before: before + [e], instead: instead, after: after)
        case .instead: HookChain(before: before, instead: [e] + instead, after: after)
        case .after: HookChain(before: before, instead: instead, after: after + [e])
        }
    }

    func removing(_ id: UInt64) -> HookChain {
        HookChain(before: before.filter { $0.id != id }, instead: instead.filter { $0.id != id },
                  after: after.filter { $0.id != id })
    }

    func contains(_ id: UInt64) -> Bool {
        before.contains { $0.id == id } || instead.contains { $0.id == id } || after.contains { $0.id == id }
    }
}
