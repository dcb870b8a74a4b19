import CDynamicRuntime
import Glibc
import Synchronization

/// Per-call bookkeeping, on the entry's stack: what a `HookContext` points at. Small: a word
/// call writes it on every call, and a word call's argument and return words follow it
/// (`HookWordCall`).
@usableFromInline
struct HookCallState {
    /// The class's chain, and a per-object entry's own chain merged with it (before and after
    /// hooks after the class's, instead hooks before them).
    let chainRef: ObjectWord<HookChain>
    let innerRef: ObjectWord<HookChain>?
    /// The call's argument vector; nil in a word call until something asks for it
    /// (`HookContext.arguments`).
    @usableFromInline var argv: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    /// The return storage (a word call's is its block's first return word).
    let returnStorage: UnsafeMutableRawPointer
    @usableFromInline var progress: HookProgress

    /// The argument words of a word call (then its two return words), after its state.
    @inlinable @inline(__always)
    static func words(_ state: UnsafeMutablePointer<HookCallState>) -> UnsafeMutablePointer<UInt64> {
        (UnsafeMutableRawPointer(state) + MemoryLayout<HookCallState>.stride).assumingMemoryBound(to: UInt64.self)
    }
}

/// A call's progress through its instead hooks, in one word (one store per call): the next
/// instead hook (bits 0-19; the object's own come first), the instead hooks of both chains
/// (20-39) and of the class's chain alone (40-59), whether the original or the next hook ran (60), and whether the call is a
/// word call (61). A chain holds at most 65,535 hooks at a position.
@usableFromInline
struct HookProgress {
    @usableFromInline var bits: UInt64

    @usableFromInline static var proceededBit: UInt64 { 1 << 60 }
    @usableFromInline static var wordCallBit: UInt64 { 1 << 61 }

    init(index: Int, insteadCount: Int, outerInsteadCount: Int, isWordCall: Bool) {
        bits = UInt64(index) | UInt64(insteadCount) << 20 | UInt64(outerInsteadCount) << 40
            | (isWordCall ? Self.wordCallBit : 0)
    }

    var index: UInt32 {
        get { UInt32(truncatingIfNeeded: bits & 0xFFFFF) }
        set { bits = bits & ~0xFFFFF | UInt64(newValue) }
    }
    @usableFromInline var insteadCount: UInt32 { UInt32(truncatingIfNeeded: bits >> 20 & 0xFFFFF) }
    @usableFromInline var outerInsteadCount: UInt32 { UInt32(truncatingIfNeeded: bits >> 40 & 0xFFFFF) }
    @inlinable var receiverHasOwnInsteadHooks: Bool { insteadCount > outerInsteadCount }
    @inlinable var isWordCall: Bool { bits & Self.wordCallBit != 0 }
    @inlinable var proceeded: Bool {
        get { bits & Self.proceededBit != 0 }
        set { bits = newValue ? bits | Self.proceededBit : bits & ~Self.proceededBit }
    }
    /// A word call whose instead hooks have all run: `proceed()` reaches the original.
    @inlinable var isLastInstead: Bool {
        bits & Self.wordCallBit != 0 && bits & 0xFFFFF >= bits >> 20 & 0xFFFFF
    }
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
        /// Whether an entry is a one-shot hook (the call path checks claims only then).
        let hasOnce: Bool
        /// A chain of instead hooks only (no before or after hook, no one-shot hook):
        /// its first hook's body in a box of its own (retained here, released in `deinit`),
        /// which the call path calls from a `let` without retaining the body's context.
        let firstInstead: ObjectWord<InsteadBody>?

        var total: Int { Int(beforeCount) + Int(insteadCount) + Int(afterCount) }
    }

    /// The most hooks at one position.
    static let capacity = Int(UInt16.max)

    struct Entry {
        let id: UInt64
        /// The hook as given (no wrapper closure: one allocation fewer per hook); its errors
        /// are converted where it is called.
        let body: HookRegistry.Body
        /// What only some hooks carry, in a box of its own: an entry stays four words, and a
        /// hooked object's chain within its allocation size (case 11d).
        private let extras: Extras?

        private final class Extras: Sendable {
            let native: NativeHookBody?
            let once: OnceClaim?
            init(native: NativeHookBody?, once: OnceClaim?) {
                self.native = native
                self.once = once
            }
        }

        init(id: UInt64, body: @escaping HookRegistry.Body, native: NativeHookBody? = nil, once: OnceClaim? = nil) {
            self.id = id
            self.body = body
            extras = native == nil && once == nil ? nil : Extras(native: native, once: once)
        }

        /// A C hook's callback, called instead of `body` (the same call, without the closure).
        var native: NativeHookBody? { extras?.native }
        /// Set for a hook that removes itself after its first call: the call that claims it runs it.
        var once: OnceClaim? { extras?.once }

        /// Runs the entry at `p` unless it is a one-shot hook another call already claimed (checked
        /// only when the chain `hasOnce`); says whether it ran. Read in place: no copy of the entry.
        @inline(__always) @discardableResult
        static func run(_ p: UnsafeMutablePointer<Entry>, _ ctx: HookContext, hasOnce: Bool) throws(RuntimeError) -> Bool {
            if _slowPath(hasOnce), p.pointee.once != nil { return try p.pointee.runOnce(ctx) }
            try call(p, ctx)
            return true
        }

        /// Runs the entry at `p`, which is no one-shot hook, read in place.
        @inline(__always)
        static func call(_ p: UnsafeMutablePointer<Entry>, _ ctx: HookContext) throws(RuntimeError) {
            if let native = p.pointee.native { return try native.run(ctx) }
            do {
                try p.pointee.body(ctx)
            } catch {
                throw hookError(error, ctx)
            }
        }

        @inline(never)
        private func runOnce(_ ctx: HookContext) throws(RuntimeError) -> Bool {
            guard once!.claim() else { return false }
            defer { HookRegistry.removeAfterFirstCall(id) }
            if let native { try native.run(ctx); return true }
            do {
                try body(ctx)
            } catch {
                throw hookError(error, ctx)
            }
            return true
        }
    }

    static func make(before: some Collection<Entry>, instead: some Collection<Entry>, after: some Collection<Entry>,
                     selector: sf_sel? = nil, next: HookChain? = nil) -> HookChain {
        let hasOnce = [before.contains { $0.once != nil }, instead.contains { $0.once != nil },
                       after.contains { $0.once != nil }].contains(true)
        let first = before.isEmpty && after.isEmpty && !hasOnce
            ? instead.first.map { ObjectWord(retaining: InsteadBody($0.body, native: $0.native, insteadCount: instead.count, selector: selector)) } : nil
        let header = Header(selector: selector, next: next, beforeCount: UInt16(before.count),
                            insteadCount: UInt16(instead.count), afterCount: UInt16(after.count),
                            hasOnce: hasOnce, firstInstead: first)
        let chain = unsafeDowncast(create(minimumCapacity: header.total) { _ in header }, to: HookChain.self)
        first?.withObject { $0.chain = ObjectWord(unretained: chain) }
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
        _ = withUnsafeMutablePointers { h, e in
            h.pointee.firstInstead?.release()
            e.deinitialize(count: h.pointee.total)
        }
    }

    // The storage is inline in this object and never moves: the buffers stay valid as long as
    // the chain is held (by the caller, or by the read section it was loaded in). The header is
    // read through its pointer: the stored `header` property costs an exclusivity check.
    private func part(_ start: Int, _ count: UInt16) -> UnsafeBufferPointer<Entry> {
        withUnsafeMutablePointerToElements { UnsafeBufferPointer(start: $0 + start, count: Int(count)) }
    }

    private var head: UnsafeMutablePointer<Header> { withUnsafeMutablePointerToHeader { $0 } }

    var before: UnsafeBufferPointer<Entry> { part(0, head.pointee.beforeCount) }
    /// Newest first.
    var instead: UnsafeBufferPointer<Entry> { part(Int(head.pointee.beforeCount), head.pointee.insteadCount) }
    var after: UnsafeBufferPointer<Entry> {
        part(Int(head.pointee.beforeCount) + Int(head.pointee.insteadCount), head.pointee.afterCount)
    }
    var selector: sf_sel? { head.pointee.selector }
    var next: HookChain? { head.pointee.next }

    /// What the call path reads of a chain, once per call, without a retain (in a read section).
    struct Shape {
        let entries: UnsafeMutablePointer<Entry>
        let before: Int
        let instead: Int
        let after: Int
        let hasOnce: Bool
        let firstInstead: ObjectWord<InsteadBody>?
    }

    @inline(__always)
    static func shape(_ ref: ObjectWord<HookChain>) -> Shape {
        ref.withObject { c in
            c.withUnsafeMutablePointers { h, e in
                Shape(entries: e, before: Int(h.pointee.beforeCount), instead: Int(h.pointee.insteadCount),
                      after: Int(h.pointee.afterCount), hasOnce: h.pointee.hasOnce, firstInstead: h.pointee.firstInstead)
            }
        }
    }

    /// The same hooks as a node of an object's list.
    func linked(_ selector: sf_sel?, _ next: HookChain?) -> HookChain {
        HookChain.make(before: before, instead: instead, after: after, selector: selector, next: next)
    }

    var isEmpty: Bool { head.pointee.total == 0 }

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

/// A hook body held by a `let`: called through a guaranteed reference to the box, Swift does
/// not retain the body's context (it does for a closure loaded from the chain's entries). It
/// names its chain and the chain's instead count, so a caller that reads the box alone (a
/// word call: `MethodHook.firstInsteadBits`) sees one consistent chain.
final class InsteadBody {
    let body: HookRegistry.Body
    /// A C hook's callback, called instead of `body`.
    let native: NativeHookBody?
    let insteadCount: Int
    /// The selector of an object's own chain (its list is keyed by selector), nil in a class's.
    let selector: sf_sel?
    /// The chain that holds this box, unretained (set once, before the chain is published).
    fileprivate(set) var chain: ObjectWord<HookChain>?
    init(_ body: @escaping HookRegistry.Body, native: NativeHookBody?, insteadCount: Int, selector: sf_sel?) {
        self.body = body
        self.native = native
        self.insteadCount = insteadCount
        self.selector = selector
    }

    var chainRef: ObjectWord<HookChain> { chain.unsafelyUnwrapped }

    /// Runs the body of the box `ref` and returns nil, or its error converted, with the
    /// return object released, in a `PendingError` box (+1): the conversion out of line, so
    /// that the caller keeps few registers across the call.
    @inline(__always)
    static func callBoxingFailure(_ ref: ObjectWord<InsteadBody>, _ ctx: HookContext) -> UnsafeMutableRawPointer? {
        do {
            try ref.withObject { b in
                if let native = b.native { try native.run(ctx) } else { try b.body(ctx) }
            }
            return nil
        } catch {
            return boxedFailure(error, ctx)
        }
    }

    @inline(never)
    private static func boxedFailure(_ error: any Error, _ ctx: HookContext) -> UnsafeMutableRawPointer {
        let e = hookError(error, ctx)
        ctx.releaseReturnObject()
        return ObjectWord(retaining: PendingError(e)).pointer
    }

    /// Runs the body of the box `ref` (kept by its chain, which the read section keeps).
    @inline(__always)
    static func call(_ ref: ObjectWord<InsteadBody>, _ ctx: HookContext) throws(RuntimeError) {
        do {
            try ref.withObject { b in
                if let native = b.native { try native.run(ctx) } else { try b.body(ctx) }
            }
        } catch {
            throw hookError(error, ctx)
        }
    }
}

/// The first caller to claim it wins; every later claim fails.
final class OnceClaim: @unchecked Sendable {
    private let claimed = Atomic<Bool>(false)

    func claim() -> Bool {
        !claimed.load(ordering: .relaxed) && !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }
}
