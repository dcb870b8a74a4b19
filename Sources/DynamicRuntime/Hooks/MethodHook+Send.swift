import CDynamicRuntime

// A call of a hooked method over integer-register words: a typed send (the method record
// names its hook, `MethodRecord.hookWord`) or a C caller through the register entry. The
// words and the call's state share one stack block; no argument vector is built unless a
// hook asks for one (`HookContext.arguments`), and `proceed()` calls an original of whole
// words straight from the words.

/// A typed send's hook branch (read section held): runs the hook `bits` over the receiver,
/// selector and (up to three) argument words and returns the return register's word; nil when the hook's
/// signature does not travel in integer registers (the send then calls the IMP, the
/// trampoline). A thrown error is recorded for C, as a closure body's is, and keeps its type.
/// A free function: a static method would load the class's metadata on every call.
@usableFromInline
func hookSendWords(_ bits: UInt, _ o: UInt64, _ s: UInt64, _ a: UInt64, _ b: UInt64, _ c: UInt64) throws(RuntimeError) -> UInt64? {
    let hook = ObjectWord<MethodHook>(nonZeroBits: bits)
    guard hook.withObject({ $0.takesWords }) else { return nil }
    let (r, failure) = MethodHook.runWordCall(hook, o, s, a, b, c)
    if let failure { throw hookSendFailure(failure) }
    return r
}

/// The error of a failed word call, recorded for C, as a closure body's is; it keeps its type.
@inline(never)
private func hookSendFailure(_ failure: UnsafeMutableRawPointer) -> RuntimeError {
    let error = PendingError.unbox(failure)
    error.record()
    return error
}

/// The stack block of a word call: the `HookCallState`, then five argument words and two
/// return words (zero: the chain's cleared return storage), then room for an argument vector
/// over the words, filled on first use. Only the state and the words are written per call.
enum HookWordCall {
    /// The block's bytes: the state, then seven words (`HookCallState.words`), then five pointers.
    static var size: Int { MemoryLayout<HookCallState>.stride + 12 * 8 }

    /// The word call's argument vector, built now (over its words) if nothing asked before.
    @inline(never)
    static func argumentVector(_ state: UnsafeMutablePointer<HookCallState>) -> UnsafeMutablePointer<UnsafeMutableRawPointer?> {
        if let argv = state.pointee.argv { return argv }
        let words = HookCallState.words(state)
        let argv = UnsafeMutableRawPointer(words + 7).bindMemory(to: UnsafeMutableRawPointer?.self, capacity: 5)
        for i in 0..<5 { (argv + i).initialize(to: UnsafeMutableRawPointer(words + i)) }
        state.pointee.argv = argv
        return argv
    }

    /// Runs `body` over a block holding `state` and the words; returns the first return word.
    /// The block is written by this code and read at fixed offsets (no stack protector), and
    /// its argument vector is left unwritten until asked for.
    @inline(__always)
    static func with(_ chainRef: ObjectWord<HookChain>, inner: ObjectWord<HookChain>?, instead: Int, next: Int,
                     _ o: UInt64, _ s: UInt64, _ a: UInt64, _ b: UInt64, _ c: UInt64,
                     _ body: (UnsafeMutablePointer<HookCallState>) -> Void) -> UInt64 {
        _withUnprotectedUnsafeTemporaryAllocation(byteCount: size, alignment: 16) { block in
            let p = block.baseAddress.unsafelyUnwrapped.bindMemory(to: HookCallState.self, capacity: 1)
            let words = UnsafeMutableRawPointer(HookCallState.words(p)).bindMemory(to: UInt64.self, capacity: 7)
            words.initialize(to: o)
            (words + 1).initialize(to: s)
            (words + 2).initialize(to: a)
            (words + 3).initialize(to: b)
            (words + 4).initialize(to: c)
            (words + 5).initialize(to: 0)
            (words + 6).initialize(to: 0)
            p.initialize(to: HookCallState(chainRef: chainRef, innerRef: inner, argv: nil, returnStorage: UnsafeMutableRawPointer(words + 5),
                                           progress: HookProgress(index: next, insteadCount: instead,
                                                                  outerInsteadCount: instead, isWordCall: true)))
            body(p)
            return words[5]
        }
    }
}

extension MethodHook {
    /// Runs the hook over argument words (receiver, selector, up to three more) and returns the
    /// first return word and the hook's error, if any, in a `PendingError` box (+1); the caller
    /// holds a read section. An instead-only chain (no before or after hooks, no one-shot hook,
    /// not merged with another) is run here without the general loop: its first hook is called from the box the hook publishes, which names
    /// its chain, as `proceed()` would call it. A hidden entry's chain (the receiver's own)
    /// takes the same path when it is instead-only.
    @inline(__always)
    static func runWordCall(_ hook: ObjectWord<MethodHook>, _ o: UInt64, _ s: UInt64, _ a: UInt64, _ b: UInt64,
                            _ c: UInt64) -> (UInt64, UnsafeMutableRawPointer?) {
        let (box, hidden) = hook.withObject { ($0.firstInstead.load(), $0.isHidden) }
        guard _fastPath(box != nil && !hidden), let first = box else {
            // A hidden entry whose receiver's own chain is instead-only, with no class hook.
            if hidden, let own = hook.withObject({ $0.ownFirstInstead(receiver: o) }) {
                let (chainRef, instead) = own.withObject { ($0.chainRef, $0.insteadCount) }
                return runFirstInstead(hook, own, chainRef, instead, o, s, a, b, c)
            }
            return runWordCallSlowly(hook, o, s, a, b, c)
        }
        // An instead-only chain, read through its first body's box.
        let (chainRef, instead) = first.withObject { ($0.chainRef, $0.insteadCount) }
        return runFirstInstead(hook, first, chainRef, instead, o, s, a, b, c)
    }

    /// A word call of a hidden entry, or of a chain that is not instead-only (out of line: the
    /// common call keeps fewer registers).
    @inline(never)
    static func runWordCallSlowly(_ hook: ObjectWord<MethodHook>, _ o: UInt64, _ s: UInt64, _ a: UInt64, _ b: UInt64,
                                  _ c: UInt64) -> (UInt64, UnsafeMutableRawPointer?) {
        var target = hook
        var chain = hook.withObject { $0.chainRef }
        var inner: ObjectWord<HookChain>? = nil
        if hook.withObject({ $0.isHidden }) {
            (target, chain, inner) = hook.withObject {
                $0.hiddenCall(chain, receiver: sf_id(bitPattern: UInt(o)))
            }
        }
        let shape = HookChain.shape(chain)
        guard inner == nil, let first = shape.firstInstead else {
            return runWordCallGenerally(target, chain, inner, o, s, a, b, c)
        }
        return runFirstInstead(target, first, chain, shape.instead, o, s, a, b, c)
    }

    /// Runs an instead-only chain over the words: its first hook, called as `proceed()` would.
    @inline(__always)
    static func runFirstInstead(_ target: ObjectWord<MethodHook>, _ first: ObjectWord<InsteadBody>, _ chainRef: ObjectWord<HookChain>,
                                _ instead: Int, _ o: UInt64, _ s: UInt64, _ a: UInt64, _ b: UInt64,
                                _ c: UInt64) -> (UInt64, UnsafeMutableRawPointer?) {
        // The body's error leaves the block boxed (allocated only then) in a plain word.
        var failure: UnsafeMutableRawPointer? = nil
        let r = HookWordCall.with(chainRef, inner: nil, instead: instead, next: 1, o, s, a, b, c) { state in
            failure = InsteadBody.callBoxingFailure(first, HookContext(hook: target, state: state))
        }
        return (r, failure)
    }

    /// A word call of any other chain (before or after hooks, a one-shot hook, merged chains):
    /// the general loop over an argument vector into the words.
    @inline(never)
    static func runWordCallGenerally(_ target: ObjectWord<MethodHook>, _ chainRef: ObjectWord<HookChain>,
                                     _ inner: ObjectWord<HookChain>?, _ o: UInt64, _ s: UInt64, _ a: UInt64,
                                     _ b: UInt64, _ c: UInt64) -> (UInt64, UnsafeMutableRawPointer?) {
        var failure: UnsafeMutableRawPointer? = nil
        // The general loop counts its chains itself (`run`): this state only holds the block.
        let r = HookWordCall.with(chainRef, inner: inner, instead: 0, next: 0, o, s, a, b, c) { state in
            let args = HookWordCall.argumentVector(state)
            let ret = state.pointee.returnStorage
            do throws(RuntimeError) {
                try target.withObject { (h) throws(RuntimeError) in try h.run(chainRef, inner: inner, ret, args) }
            } catch {
                failure = ObjectWord(retaining: PendingError(error)).pointer
            }
        }
        return (r, failure)
    }
}
