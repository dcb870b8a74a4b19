import CShims

// A typed send to a hooked method: the method record names its hook (`MethodRecord.hookWord`),
// and the send runs the hook's chain over its argument words itself — no trampoline, no
// closure box or word body in between, no second read section (the send holds one).

/// A typed send's hook branch (read section held): runs the hook `bits` over the receiver,
/// selector and (up to three) argument words and returns the return register's word; nil when the hook's
/// signature does not travel in integer registers (the send then calls the IMP, the
/// trampoline). A thrown error is recorded for C, as a closure body's is, and keeps its type.
/// A free function: a static method would load the class's metadata on every call.
@usableFromInline
func hookSendWords(_ bits: UInt, _ o: UInt64, _ s: UInt64, _ a: UInt64, _ b: UInt64, _ c: UInt64) throws(RuntimeError) -> UInt64? {
    let hook = Unmanaged<MethodHook>.fromOpaque(UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped)
    guard hook._withUnsafeGuaranteedRef({ $0.takesWords }) else { return nil }
    // The integer-register frame: five argument words, the return words (zero: the chain's
    // cleared return storage), and the argument vector pointing at them.
    var frame = HookWordFrame(words: (o, s, a, b, c, 0, 0), argv: (nil, nil, nil, nil, nil))
    // The closure does not throw (a throwing one is not inlined here): an error leaves it boxed
    // (allocated only then) in a plain word.
    var failure: UnsafeMutableRawPointer? = nil
    withUnsafeMutablePointer(to: &frame) { f in
        let base = UnsafeMutableRawPointer(f)
        let argv = (base + HookWordFrame.argvOffset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        argv.initialize(to: base)
        (argv + 1).initialize(to: base + 8)
        (argv + 2).initialize(to: base + 16)
        (argv + 3).initialize(to: base + 24)
        (argv + 4).initialize(to: base + 32)
        do throws(RuntimeError) {
            try MethodHook.runSent(hook, receiver: o, base + 40, argv)
        } catch {
            failure = Unmanaged.passRetained(PendingError(error)).toOpaque()
        }
    }
    if let failure { throw recordedHookFailure(Unmanaged<PendingError>.fromOpaque(failure).takeRetainedValue().error) }
    return frame.words.5
}

@inline(never)
private func recordedHookFailure(_ error: RuntimeError) -> RuntimeError {
    error.record()
    return error
}

/// What `hookSendWords` lays out on its stack.
struct HookWordFrame {
    var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    var argv: (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?,
               UnsafeMutableRawPointer?)
    static var argvOffset: Int { MemoryLayout<HookWordFrame>.offset(of: \.argv)! }
}

extension MethodHook {
    /// `run` for a caller that holds a read section already. An instead-only chain (no before
    /// or after hooks, no one-shot hook, not merged with another) is run here without the
    /// general loop: its first hook is called from the chain's box, as `proceed()` would call
    /// it. A hidden entry's chain (the receiver's own) takes the same path.
    @inline(__always)
    static func runSent(_ hook: Unmanaged<MethodHook>, receiver: UInt64, _ ret: UnsafeMutableRawPointer,
                        _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(RuntimeError) {
        var target = hook
        var (chainRef, hidden) = hook._withUnsafeGuaranteedRef { ($0.chainRef, $0.isHidden) }
        var inner: Unmanaged<HookChain>? = nil
        if hidden {
            (target, chainRef, inner) = hook._withUnsafeGuaranteedRef {
                // The receiver as it arrived, not read back from the frame just written.
                $0.hiddenCall(chainRef, receiver: sf_id(bitPattern: UInt(receiver)))
            }
        }
        let shape = HookChain.shape(chainRef)
        guard inner == nil, let first = shape.firstInstead else {
            return try withGuaranteed(target) { (h) throws(RuntimeError) in
                try h.run(chainRef, inner: inner, ret, args)
            }
        }
        // The return storage is the frame's, already zero.
        var state = HookCallState(chainRef: chainRef, innerRef: nil, arguments: args, returnStorage: ret, insteadIndex: 1,
                                  outerInsteadCount: shape.instead, insteadCount: shape.instead)
        try withUnsafeMutablePointer(to: &state) { (p) throws(RuntimeError) in
            let ctx = HookContext(hook: target, state: p)
            do throws(RuntimeError) {
                try InsteadBody.call(first, ctx)
            } catch {
                ctx.releaseReturnObject()
                throw error
            }
        }
    }
}
