import CDynamicRuntime
import Glibc
import Synchronization

/// One call as a hook sees it. Valid only while the hook runs: to keep the call, make an
/// `Invocation` with `makeInvocation()`.
public struct HookContext {
    // Two words, so that it travels in registers to hook bodies and `proceed()`: the hook, and
    // the call's state on the entry's stack, which holds the rest (chains, frame, progress).
    // Unretained: the trampoline keeps the hook, and the read section the chain, for as long
    // as the call (and so the context) lives. The call path reads them as guaranteed
    // references, which costs no retain.
    @usableFromInline let hookRef: ObjectWord<MethodHook>
    @usableFromInline let state: UnsafeMutablePointer<HookCallState>

    /// A context for the call whose state `state` holds.
    init(hook: ObjectWord<MethodHook>, state: UnsafeMutablePointer<HookCallState>) {
        hookRef = hook
        self.state = state
    }

    var chainRef: ObjectWord<HookChain> { state.pointee.chainRef }
    /// A per-object entry's own chain, merged position by position after the class's `chain`.
    var innerRef: ObjectWord<HookChain>? { state.pointee.innerRef }
    /// The call's argument vector (a word call builds it on first use).
    var arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?> {
        if let argv = state.pointee.argv { return argv }
        return HookWordCall.argumentVector(state)
    }
    var returnStorage: UnsafeMutableRawPointer { state.pointee.returnStorage }

    var hook: MethodHook { hookRef.object }
    var chain: HookChain { chainRef.object }
    var inner: HookChain? { innerRef?.object }

    /// The receiver.
    @inlinable
    public var target: ObjectRef {
        let s = state
        if s.pointee.progress.isWordCall { return ObjectRef(word: HookCallState.words(s).pointee) }
        return ObjectRef(s.pointee.argv.unsafelyUnwrapped[0]!.load(as: sf_id?.self))
    }
    /// The selector that was sent.
    @inlinable
    public var selector: Selector { hookRef.withObject { $0.selector } }
    /// The method's types.
    public var signature: Signature { hook.signature }
    /// The implementation the hook wraps (resolved now, for an inherited method).
    public var originalImplementation: IMP { hook.currentOriginal() }
    /// Whether the receiver has instead hooks of its own on this method, which run before this
    /// class hook's (an engine's instance rule takes precedence over its class rule).
    @inlinable
    package var receiverHasOwnInsteadHooks: Bool { state.pointee.progress.receiverHasOwnInsteadHooks }
    /// Whether the original (or the next instead-hook) has run for this call.
    public var didProceed: Bool { state.pointee.progress.proceeded }

    /// The return value so far, as a dynamic value.
    @available(*, deprecated, renamed: "returnValue")
    public var returnValueDescription: DynamicValue { returnValue }

    func releaseReturnObject() {
        if hookRef.withObject({ $0.returnsObject }), let o = returnStorage.load(as: sf_id?.self) {
            returnStorage.storeBytes(of: nil, as: sf_id?.self)
            sf_release_inline(o)
        }
    }

    /// Runs the next instead-hook, or the original; the result lands in the return value.
    @inlinable
    public func proceed() throws(RuntimeError) {
        guard _fastPath(proceedByWords()) else { return try proceedGenerally() }
        if _slowPath(sf_get_pending_error() != nil) { try Runtime.rethrowPending() }
    }

    /// `proceed()`'s common case, inlined into the hook body (and `sf_call_proceed`): the last
    /// instead hook of a word call proceeding to an original of whole words calls it with the
    /// words, no frame of its own. False, having called nothing, for any other call. The caller
    /// checks the pending error.
    @inlinable @inline(__always)
    func proceedByWords() -> Bool {
        let s = state
        let plain = hookRef.withObject { $0.wordOriginalBits.load(ordering: .acquiring) }
        guard _fastPath(s.pointee.progress.isLastInstead && plain != 0) else { return false }
        s.pointee.progress.proceeded = true
        let w = HookCallState.words(s)
        typealias Words = @convention(c) (UInt64, UInt64, UInt64, UInt64, UInt64) -> UInt64
        w[5] = CFunction.at(bits: plain, as: Words.self)(w[0], w[1], w[2], w[3], w[4])
        return true
    }

    /// `proceed()` of any other call: the next instead hook, or the original.
    @usableFromInline @inline(never)
    func proceedGenerally() throws(RuntimeError) {
        if state.pointee.progress.index < state.pointee.progress.insteadCount { return try proceedToNextHook() }
        try callOriginal()
    }

    @inline(never)
    private func proceedToNextHook() throws(RuntimeError) {
        // The object's own instead hooks first (the more specific hook is the outer one, as in
        // Aspects and Stinger), then the class's; a claimed one-shot hook is passed over. The
        // chains are read in place: no retain per call.
        let s = state
        let own = Int(s.pointee.progress.insteadCount - s.pointee.progress.outerInsteadCount)
        while true {
            let next = Int(s.pointee.progress.index)
            guard next < s.pointee.progress.insteadCount else { return try callOriginal() }
            s.pointee.progress.index = UInt32(next + 1)
            let chain = HookChain.shape(next < own ? innerRef.unsafelyUnwrapped : chainRef)
            let at = chain.entries + chain.before + (next < own ? next : next - own)
            if try HookChain.Entry.run(at, self, hasOnce: chain.hasOnce) { return }
        }
    }

    /// Runs the original implementation now, skipping any remaining instead-hooks.
    public func invokeOriginal() throws(RuntimeError) {
        try callOriginal()
    }

    /// An original of whole integer-register words (a plain C function, or a Swift closure
    /// with a word body: decided when it was published) is called here; the rest out of line.
    @inline(__always)
    private func callOriginal() throws(RuntimeError) {
        state.pointee.progress.proceeded = true
        // A per-object entry's original (the visible class's method) is published in its hook
        // as a class hook's is (`resolveInherited`).
        let (imp, body, wide, wideReturn, returnsObject) = hookRef.withObject {
            ($0.originalBits.load(ordering: .acquiring), $0.originalBody.load(),
             $0.wideArguments, $0.wideReturn, $0.returnsObject)
        }
        guard imp != 0, wide != 0, !returnsObject, try callWords(imp, body, wide, wideReturn) else {
            return try callOriginalSlowly()
        }
    }

    /// Calls an original of `wide` whole integer-register words: a plain C function (`body`
    /// 0), or a published Swift closure's word or `Int` body, called as a typed send calls it.
    /// False, having called nothing, when the closure has no such body.
    @inline(__always)
    private func callWords(_ imp: UInt, _ body: ObjectWord<ClosureIMP>?, _ wide: Int, _ wideReturn: Bool) throws(RuntimeError) -> Bool {
        let a = arguments
        let w = (a[0].unsafelyUnwrapped.load(as: UInt64.self), a[1].unsafelyUnwrapped.load(as: UInt64.self),
                 wide > 2 ? a[2].unsafelyUnwrapped.load(as: UInt64.self) : 0,
                 wide > 3 ? a[3].unsafelyUnwrapped.load(as: UInt64.self) : 0,
                 wide > 4 ? a[4].unsafelyUnwrapped.load(as: UInt64.self) : 0)
        let v: UInt64
        if let body {
            guard let r = try HookContext.callWordBody(body, w, arity: wide - 2, returnStorage, wideReturn) else { return false }
            v = r
        } else {
            typealias Words = @convention(c) (UInt64, UInt64, UInt64, UInt64, UInt64) -> UInt64
            v = CFunction.at(bits: imp, as: Words.self)(w.0, w.1, w.2, w.3, w.4)
        }
        if wideReturn { returnStorage.storeBytes(of: v, as: UInt64.self) }
        if _slowPath(sf_get_pending_error() != nil) { try Runtime.rethrowPending() }
        return true
    }

    /// The other originals: a closure's word body over whole-register words, else the general
    /// call (a closure's body on the argument vector, the direct call, libffi).
    @inline(never)
    private func callOriginalSlowly() throws(RuntimeError) {
        let (imp, body, wide, wideReturn, returnsObject) = hookRef.withObject {
            ($0.originalBits.load(ordering: .acquiring), $0.originalBody.load(),
             $0.wideArguments, $0.wideReturn, $0.returnsObject)
        }
        if returnsObject { releaseReturnObject() }
        if imp != 0, wide != 0, try callWords(imp, body, wide, wideReturn) { return }
        try hookRef.withObject { (hook) throws(RuntimeError) in
            try hook.callOriginal(arguments, returnStorage)
        }
    }

    /// Runs the word body of the closure `bits` (an original published as a Swift closure)
    /// over whole-register words, as a typed send would; nil when it has none. A thrown error
    /// leaves zero in the return storage and is named and recorded as the closure's own entry
    /// does it.
    @inline(never)
    static func callWordBody(_ body: ObjectWord<ClosureIMP>, _ w: (UInt64, UInt64, UInt64, UInt64, UInt64), arity: Int,
                             _ ret: UnsafeMutableRawPointer, _ returns: Bool) throws(RuntimeError) -> UInt64? {
        var failure: (any Error)? = nil
        // The receiver's class read before the body runs (it may free the receiver), walked to
        // the visible class only after a throw.
        let cls = sf_id(bitPattern: UInt(w.0)).flatMap(sf_object_isa)
        let r: UInt64? = body.withObject { box in
            guard box.hasWordBody else { return nil }
            do {
                // The hook has the original's key, and an `Int` body's key is exactly its own.
                if let direct = box.direct { return try ClosureIMP.callDirect(direct, arity: arity, w.0, (w.2, w.3, w.4, 0)) }
                return try box.wordBody(w.0, w.1, w.2, w.3, w.4, 0)
            } catch { failure = error; return 0 }
        }
        if let failure {
            if returns { ret.storeBytes(of: 0, as: UInt64.self) }
            throw ClosureIMP.failure(failure, receiverClass: sf_class_visible(cls), w.1)
        }
        return r
    }

    /// A retained record of this call that can be replayed later, on any thread, after the
    /// caller has returned. Replaying calls the original implementation, not the hook.
    public func makeInvocation() -> Invocation {
        let inv = Invocation.capture(signature: hook.signature.storage, arguments: arguments)
        inv.storage.setImplementation(hook.currentOriginal())
        inv.retainArguments()
        return inv
    }

    /// Like `makeInvocation()`, but reuses `record` when it has this call's signature, so a
    /// steady stream of captured calls allocates nothing.
    public func capture(into record: inout Invocation?) {
        let signature = hookRef.withObject { ObjectWord(unretained: $0.signature.storage) }
        if record != nil, record!.storage.h.pointee.signature === signature.object,
           isKnownUniquelyReferenced(&record!.storage) {
            let s = record!.storage
            if s.capturesByWords {
                s.capture(from: arguments)
            } else {
                s.refill(from: arguments)
                s.retainArguments()
            }
            s.setImplementation(hookRef.withObject { $0.currentOriginal() })
        } else {
            record = makeInvocation()
        }
    }

    /// `capture(into:)` for a spare record that only the caller holds (a throttle's, emptied
    /// for reuse by `emptiedRetainedWord()`): no uniqueness check, and the original it kept is
    /// reused while its box is still the hook's published one (no read section, no retain).
    package func capture(intoSpare record: inout Invocation?) {
        let signature = hookRef.withObject { ObjectWord(unretained: $0.signature.storage) }
        if record != nil, record!.storage.h.pointee.signature === signature.object,
           record!.storage.capturesByWords {
            let s = record!.storage
            s.capture(from: arguments)
            hookRef.withObject { hook in
                if let kept = s.h.pointee.implementationBox, hook.isCurrentOriginal(kept) { return }
                Self.readOriginal(of: hook, into: s)
            }
        } else {
            capture(into: &record)
        }
    }

    /// Rewrites `record`, a captured call of this method that nobody else holds, with this
    /// call's arguments when only argument words differ: the same target and selector, no
    /// object argument to retain or release. Returns false, changing nothing, otherwise.
    /// A throttle refills the call it holds this way instead of capturing into another record
    /// and swapping it in.
    package func refill(_ record: inout Invocation) -> Bool {
        // The receiver first: a call of another object (under a class's rule) is declined
        // for a compare, before the uniqueness check's call into the runtime.
        let receiver = state.pointee.argv.map { UnsafeRawPointer($0[0].unsafelyUnwrapped).load(as: UInt.self) }
            ?? UInt(HookCallState.words(state)[0])
        guard UInt(bitPattern: record.storage.h.pointee.target) == receiver, record.isUniquelyReferenced() else {
            return false
        }
        return record.storage.rewrite(from: state, of: hookRef)
    }

    /// The hook's original for a record, with the box it was published in (nil while inherited).
    @inline(never)
    static func readOriginal(of hook: MethodHook, into s: InvocationStorage) {
        if let box = hook.currentOriginalBox() {
            s.setImplementation(box.imp, box: ObjectWord(retaining: box))
        } else {
            s.setImplementation(hook.currentOriginal())
        }
    }
}

extension HookContext: MessageFrame {
    /// The argument's place in the live call's frame.
    public func _argumentSlot(_ position: Int) -> UnsafeMutableRawPointer { arguments[position]! }
    /// The live call's return storage.
    public var _returnSlot: UnsafeMutableRawPointer { returnStorage }
    /// The hooked class and the selector.
    public var _errorContext: (className: String, selector: String) { (hook.cls.visibleName, selector.name) }

    /// Writes into the frame; the value is borrowed for the rest of the call.
    public func _writeArgument(_ position: Int, type: TypeEncoding, _ write: (UnsafeMutableRawPointer) -> Void) {
        write(arguments[position]!)
    }

    /// Releases an object the original returned, then writes.
    public func _replaceReturn(_ write: (UnsafeMutableRawPointer) -> Void) {
        releaseReturnObject()
        write(returnStorage)
    }
}
