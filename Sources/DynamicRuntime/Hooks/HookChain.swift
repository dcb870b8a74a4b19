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

/// An immutable list of hooks for one method, replaced whole on every change. One allocation
/// with the entries inline (before hooks, instead hooks newest first, after hooks): every
/// object with a hook of its own has one.
final class HookChain: ManagedBuffer<HookChain.Header, HookChain.Entry> {
    struct Header {
        /// In an object's own list (ObjectHookList): the selector this chain hooks, and the next
        /// selector's chain. nil in a class's chain.
        let selector: sf_sel?
        let next: HookChain?
        let beforeCount: UInt16
        let insteadCount: UInt16
        let afterCount: UInt16

        var total: Int { Int(beforeCount) + Int(insteadCount) + Int(afterCount) }
    }

    /// The most hooks at one position.
    static let capacity = Int(UInt16.max)

    struct Entry {
        let id: UInt64
        /// The hook as given (no wrapper closure: one allocation fewer per hook); its errors
        /// are converted where it is called.
        let body: HookRegistry.Body
        /// Set for a hook that removes itself after its first call: the call that claims it runs it.
        var once: OnceClaim? = nil

        @inline(__always)
        private func call(_ ctx: HookContext) throws(RuntimeError) {
            do {
                try body(ctx)
            } catch {
                throw hookError(error, ctx)
            }
        }

        /// Runs the body unless it is a one-shot hook another call already claimed; says whether
        /// it ran.
        @inline(__always) @discardableResult
        func run(_ ctx: HookContext) throws(RuntimeError) -> Bool {
            guard let once else {
                try call(ctx)
                return true
            }
            guard once.claim() else { return false }
            defer { HookRegistry.removeAfterFirstCall(id) }
            try call(ctx)
            return true
        }
    }

    static func make(before: some Collection<Entry>, instead: some Collection<Entry>, after: some Collection<Entry>,
                     selector: sf_sel? = nil, next: HookChain? = nil) -> HookChain {
        let header = Header(selector: selector, next: next, beforeCount: UInt16(before.count),
                            insteadCount: UInt16(instead.count), afterCount: UInt16(after.count))
        let chain = unsafeDowncast(create(minimumCapacity: header.total) { _ in header }, to: HookChain.self)
        chain.withUnsafeMutablePointerToElements { p in
            var q = p
            for part in [Array(before), Array(instead), Array(after)] {
                q.initialize(from: part, count: part.count)
                q += part.count
            }
        }
        return chain
    }

    static func empty() -> HookChain { make(before: [], instead: [], after: []) }

    deinit {
        _ = withUnsafeMutablePointers { h, e in e.deinitialize(count: h.pointee.total) }
    }

    // The storage is inline in this object and never moves: the buffers stay valid as long as
    // the chain is held (by the caller, or by the read section it was loaded in).
    private func part(_ start: Int, _ count: UInt16) -> UnsafeBufferPointer<Entry> {
        withUnsafeMutablePointerToElements { UnsafeBufferPointer(start: $0 + start, count: Int(count)) }
    }

    var before: UnsafeBufferPointer<Entry> { part(0, header.beforeCount) }
    /// Newest first.
    var instead: UnsafeBufferPointer<Entry> { part(Int(header.beforeCount), header.insteadCount) }
    var after: UnsafeBufferPointer<Entry> { part(Int(header.beforeCount) + Int(header.insteadCount), header.afterCount) }
    var selector: sf_sel? { header.selector }
    var next: HookChain? { header.next }

    /// The same hooks as a node of an object's list.
    func linked(_ selector: sf_sel?, _ next: HookChain?) -> HookChain {
        HookChain.make(before: before, instead: instead, after: after, selector: selector, next: next)
    }

    var isEmpty: Bool { header.total == 0 }

    /// Whether another hook fits at `position`.
    func hasRoom(at position: HookPosition) -> Bool {
        switch position {
        case .before: before.count < Self.capacity
        case .instead: instead.count < Self.capacity
        case .after: after.count < Self.capacity
        }
    }

    func adding(_ e: Entry, at position: HookPosition) -> HookChain {
        switch position {
        case .before: HookChain.make(before: Array(before) + [e], instead: instead, after: after, selector: selector, next: next)
        case .instead: HookChain.make(before: before, instead: [e] + Array(instead), after: after, selector: selector, next: next)
        case .after: HookChain.make(before: before, instead: instead, after: Array(after) + [e], selector: selector, next: next)
        }
    }

    func removing(_ id: UInt64) -> HookChain {
        HookChain.make(before: before.filter { $0.id != id }, instead: instead.filter { $0.id != id },
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
