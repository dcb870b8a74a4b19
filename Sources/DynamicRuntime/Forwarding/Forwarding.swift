import CDynamicRuntime

/// The forwarding path, in Objective-C's order, run when lookup finds no method:
///
/// 1. `resolveInstanceMethod:` / `resolveClassMethod:` may add the method; the send retries.
/// 2. `forwardingTargetForSelector:` may name another object, which gets the same frame.
/// 3. `methodSignatureForSelector:` (or the caller's own types) then `forwardInvocation:`
///    with an `Invocation`, whose return value becomes the caller's.
/// 3½. Where no `forwardInvocation:` is defined, the process-wide forward handler
///    (`RuntimeClass.setForwardHandler`) may answer the invocation.
/// 4. `doesNotRecognizeSelector:` runs if defined; the caller gets a thrown error (Swift) or
///    SF_ERR_UNRECOGNIZED_SELECTOR (C). The process never traps.
enum Forwarding {
    static let resolveInstanceMethod = Selector("resolveInstanceMethod:")
    static let resolveClassMethod = Selector("resolveClassMethod:")
    static let forwardingTarget = Selector("forwardingTargetForSelector:")
    static let methodSignature = Selector("methodSignatureForSelector:")
    static let forwardInvocation = Selector("forwardInvocation:")
    static let doesNotRecognize = Selector("doesNotRecognizeSelector:")

    static let maximumDepth = 64

    /// The selectors every forwarded send looks up, read from their C copies (set before any
    /// class exists): a `static let` costs a once-check on each read.
    static var forwardingTargetSelector: Selector { stageSelector(Int32(SF_STAGE_FORWARDING_TARGET), forwardingTarget) }
    static var methodSignatureSelector: Selector { stageSelector(Int32(SF_STAGE_METHOD_SIGNATURE), methodSignature) }
    static var forwardInvocationSelector: Selector { stageSelector(Int32(SF_STAGE_FORWARD_INVOCATION), forwardInvocation) }

    @inline(__always)
    private static func stageSelector(_ stage: Int32, _ registered: @autoclosure () -> Selector) -> Selector {
        if let raw = sf_stage_selector(stage) { return Selector(raw: raw) }
        return registered()
    }

    /// Selectors whose methods define forwarding itself: not hookable.
    static let reserved: Set<Selector> = [resolveInstanceMethod, resolveClassMethod, forwardingTarget,
                                          methodSignature, forwardInvocation, doesNotRecognize]

    /// The miss sequence, for a caller's frame of either kind (`SwiftFrame`, `CFrame`), in the
    /// order `earlyStages` and `lateStages` give; a frame adapter knows how to send its frame
    /// on, which signature an invocation gets, and where the return value goes.
    static func handleMiss<Frame: ForwardingFrame>(_ raw: sf_id, _ selector: Selector, cls: sf_class_t,
                                                   frame: Frame) throws(RuntimeError) -> Frame.Outcome {
        // The lookup that missed may have run a `+initialize` that threw: the error is the send's.
        try Runtime.rethrowPending()
        try guardDepth(cls, selector)
        defer { sf_forward_depth_exit() }

        return try frameStages(raw, selector, cls: cls, frame: frame, from: 1)
    }

    /// Stages 2 to 4 (after the resolver); the forwarding IMP starts here. The caller holds a
    /// depth level (`guardDepth`).
    static func forwardStages<Frame: ForwardingFrame>(_ raw: sf_id, _ selector: Selector, cls: sf_class_t,
                                                      frame: Frame) throws(RuntimeError) -> Frame.Outcome {
        try frameStages(raw, selector, cls: cls, frame: frame, from: 2)
    }

    /// `earlyStages` for a frame, from `stage`: the frame calls a method the resolver added
    /// and sends itself on to a forwarding target.
    @_transparent
    private static func frameStages<Frame: ForwardingFrame>(_ raw: sf_id, _ selector: Selector, cls: sf_class_t,
                                                            frame: Frame, from stage: Int) throws(RuntimeError) -> Frame.Outcome {
        try earlyStages(raw, selector, cls: cls, from: stage,
                        call: { (m) throws(RuntimeError) in try frame.call(m, on: raw, selector, cls: cls) },
                        send: { (target) throws(RuntimeError) in try frame.send(to: target, selector) },
                        rest: { () throws(RuntimeError) in try invocationStages(raw, selector, cls: cls, frame: frame) })
    }

    /// Stages 3 and 4, with the process-wide forward handler between them; typed sends, which
    /// run stages 1 and 2 with their own types, start here.
    static func invocationStages<Frame: ForwardingFrame>(_ raw: sf_id, _ selector: Selector, cls: sf_class_t,
                                                         frame: Frame) throws(RuntimeError) -> Frame.Outcome {
        try lateStages(raw, selector, cls: cls,
                       invocation: { (handler) throws(RuntimeError) in
                           try invocationStage(raw, selector, cls: cls, frame: frame, handler: handler,
                                               declared: try methodSignature(raw, selector, cls))
                       },
                       forwardHandler: { () throws(RuntimeError) in try forwardHandlerStage(raw, selector, cls: cls, frame: frame) })
    }

    // MARK: - The order of the stages, for every path

    /// Stages 1 and 2 in Objective-C's order, from `stage` (1: the resolver first, 2: the
    /// forwarding target first), then `rest` (stages 3 and 4). Every path runs them through
    /// this: frames (`handleMiss`, the forwarding IMP) and typed sends (`MessageSend.typedMiss`),
    /// each with its own way to call a method the resolver added (`call`) and to send the
    /// call on to a forwarding target (`send`). Transparent, not only inlined: inlined after
    /// the closures were formed, it left the typed stage 3 a call and a context more per forward
    /// (7b and 7d about 10 % slower).
    @_transparent
    static func earlyStages<T>(_ raw: sf_id, _ selector: Selector, cls: sf_class_t, from stage: Int,
                               call: (sf_method_t) throws(RuntimeError) -> T,
                               send: (sf_id) throws(RuntimeError) -> T,
                               rest: () throws(RuntimeError) -> T) throws(RuntimeError) -> T {
        if stage < 2, try resolve(raw, selector, cls), let m = sf_lookup_method(cls, selector.raw) {
            return try call(m)
        }
        if stage < 3, let target = try forwardingTarget(raw, selector, cls) {
            defer { sf_release_inline(target) }
            return try send(target)
        }
        return try rest()
    }

    /// Stages 3 and 4 in Objective-C's order: `forwardInvocation:` where the class has it
    /// (`invocation`), else the process-wide forward handler (`forwardHandler`, nil when it
    /// does not answer), else `doesNotRecognizeSelector:` and the error. Frames
    /// (`invocationStages`) and typed records (`typedInvocationStages`) run them through this.
    /// Transparent for the reason `earlyStages` is.
    @_transparent
    static func lateStages<T>(_ raw: sf_id, _ selector: Selector, cls: sf_class_t,
                              invocation: (sf_method_t) throws(RuntimeError) -> T,
                              forwardHandler: () throws(RuntimeError) -> T?) throws(RuntimeError) -> T {
        if let handler = sf_lookup_method(cls, forwardInvocationSelector.raw) { return try invocation(handler) }
        if let outcome = try forwardHandler() { return outcome }
        throw try doesNotRecognize(raw, selector, cls)
    }

    /// Stage 3 once `methodSignatureForSelector:` answered (`declared`): the record, the
    /// `forwardInvocation:` method found by the caller (`handler`), the return value.
    static func invocationStage<Frame: ForwardingFrame>(_ raw: sf_id, _ selector: Selector, cls: sf_class_t, frame: Frame,
                                                        handler: sf_method_t, declared: Signature?) throws(RuntimeError) -> Frame.Outcome {
        let sig = try frame.invocationSignature(declared: declared, selector, cls: cls)
        var invocation = try frame.capture(sig, receiver: raw, selector, cls: cls)
        try deliver(invocation, to: raw, cls, handler)
        let outcome = frame.finish(invocation, sig)
        Invocation.recycle(&invocation)
        return outcome
    }

    /// `Invocation.invoke()` on a target without the method: forward the record's own frame.
    static func forward(_ storage: InvocationStorage, cls: sf_class_t) throws(RuntimeError) {
        let target = storage.h.pointee.target!
        storage.writeTargetAndSelector()
        let frame = SwiftFrame(signature: Signature(storage: storage.h.pointee.signature),
                               arguments: storage.argv, returnValue: storage.returnPointer)
        let sig = try handleMiss(target, Selector(raw: storage.h.pointee.selector), cls: cls, frame: frame)
        storage.h.pointee.ownsReturnObject = sig.storage.returnsObject
    }

    // MARK: - Stages

    /// Enters a forwarding level; the error for one too many is built out of line.
    @inline(__always)
    static func guardDepth(_ cls: sf_class_t, _ selector: Selector) throws(RuntimeError) {
        if _slowPath(sf_forward_depth_enter() > maximumDepth) { throw tooDeep(cls, selector) }
    }

    @inline(never)
    private static func tooDeep(_ cls: sf_class_t, _ selector: Selector) -> RuntimeError {
        sf_forward_depth_exit()
        return .forwardingFailed(.init(className: visibleName(cls), selector: selector.name, reason: "forwarding nested more than \(maximumDepth) levels; does forwardInvocation: or a forwarding target send the message back?"))
    }

    static func implements(_ cls: sf_class_t, _ selector: Selector) -> Bool {
        sf_lookup_method(cls, selector.raw) != nil
    }

    /// Stage 2: returns a +1 target other than the receiver, or nil.
    static func forwardingTarget(_ raw: sf_id, _ selector: Selector, _ cls: sf_class_t) throws(RuntimeError) -> sf_id? {
        guard let m = sf_lookup_method(cls, forwardingTargetSelector.raw) else { return nil }
        return try askForwardingTarget(m, raw, selector, cls)
    }

    /// Stage 2 with the class's `forwardingTargetForSelector:` method found by the caller.
    @inline(__always)
    static func askForwardingTarget(_ m: sf_method_t, _ raw: sf_id, _ selector: Selector,
                                    _ cls: sf_class_t) throws(RuntimeError) -> sf_id? {
        let target: OwnedObject = try sendFound(m, raw, forwardingTargetSelector, cls, selector)
        guard let t = target.raw, t != raw else {
            target.release()
            return nil
        }
        return t
    }

    /// Stage 3a: the signature the class declares for a selector it forwards, if any. When it
    /// hands back an interned signature's own types (as `setMethodSignature` and proxies do),
    /// the signature is found by that pointer instead of parsed again.
    @inline(__always)
    static func methodSignature(_ raw: sf_id, _ selector: Selector, _ cls: sf_class_t) throws(RuntimeError) -> Signature? {
        try declaredSignature(raw, selector, cls).map { Signature(raw: $0) }
    }

    /// `methodSignature` as the interned signature's C form: a typed send compares it with its
    /// own by address, and makes a `Signature` only when they differ.
    @inline(__always)
    static func declaredSignature(_ raw: sf_id, _ selector: Selector, _ cls: sf_class_t) throws(RuntimeError) -> UnsafePointer<sf_signature>? {
        guard let m = sf_lookup_method(cls, methodSignatureSelector.raw) else { return nil }
        return try askMethodSignature(m, raw, selector, cls)
    }

    @inline(never)
    private static func askMethodSignature(_ m: sf_method_t, _ raw: sf_id, _ selector: Selector,
                                           _ cls: sf_class_t) throws(RuntimeError) -> UnsafePointer<sf_signature>? {
        let text: BorrowedCString = try sendFound(m, raw, methodSignatureSelector, cls, selector)
        guard let p = text.pointer else { return nil }
        if let known = sf_sig_cache_by_types(p) { return known }
        let sig = try Signature(String(cString: p))
        if sig.raw.pointee.types == p { sf_sig_cache_put_types(sig.raw) }
        return sig.raw
    }

    /// Stage 3b: hands the record to `forwardInvocation:` (`handler`, the receiver's method).
    static func deliver(_ invocation: Invocation, to raw: sf_id, _ cls: sf_class_t, _ handler: sf_method_t) throws(RuntimeError) {
        let record = ObjectWord(unretained: invocation.storage).pointer
        // setForwardInvocation's adapter accepts only this record (see isDelivering).
        let previous = sf_swap_delivering_record(record)
        defer { _ = sf_swap_delivering_record(previous) }
        try withExtendedLifetime(invocation) { () throws(RuntimeError) in
            let _: NoReturn = try sendFound(handler, raw, forwardInvocationSelector, cls, record)
        }
    }

    /// Sends a stage's message (one argument) to the method the stage's lookup in `cls` found,
    /// as a typed send would call it. The forwarded send's read section covers the lookup and
    /// the call, so the method stays valid: one lookup per stage, not two. A super send's
    /// stages look in its start class but send to the receiver's own, as before.
    @inline(__always)
    static func sendFound<A: MessageArgument, R: MessageReturn>(_ m: sf_method_t, _ raw: sf_id, _ sel: Selector,
                                                                _ cls: sf_class_t, _ a: A) throws(RuntimeError) -> R {
        guard cls == sf_object_isa(raw) else { return try ObjectRef(raw).send(sel, a) }
        // As every send does: an error a C caller left pending is stale by now.
        Runtime.discardStalePending()
        return try MessageSend.typedCall(raw, sel, cls: cls, method: m, key: R.returnKeyCode | A.keyCode << 5,
                                         words: A.passesInWord ? (a.argumentWord, 0, 0, 0) : nil, count: 1,
                                         values: { [a] }, store: { _, p in a.storeArgument(to: p) })
    }

    /// A `setForwardInvocation` body's call: only with the record this thread is delivering.
    @inline(__always)
    static func runForwardInvocation(_ receiver: UInt64, _ record: UnsafeMutableRawPointer,
                                     _ body: (Invocation) throws -> Void) throws {
        guard isDelivering(record) else {
            let recv = ObjectRef(word: receiver)
            throw RuntimeError.reservedSelector(.init(className: recv.runtimeClass?.visibleName, selector: forwardInvocation.name, reason: "it receives the invocation the runtime is forwarding and cannot be sent directly"))
        }
        // Unretained: `deliver` holds the record for the call, and a body that keeps the
        // invocation retains it then.
        try ObjectWord<InvocationStorage>(record).withObject { try body(Invocation(storage: $0)) }
    }

    /// Whether `record` is the invocation this thread is handing to `forwardInvocation:`: a
    /// pointer anyone else sends is not a record the runtime made, and is never dereferenced.
    static func isDelivering(_ record: UnsafeRawPointer) -> Bool {
        sf_delivering_record().map { UnsafeRawPointer($0) } == record
    }

    /// Stage 4: runs a defined `doesNotRecognizeSelector:`, then reports the error.
    static func doesNotRecognize(_ raw: sf_id, _ selector: Selector, _ cls: sf_class_t) throws(RuntimeError) -> RuntimeError {
        if implements(cls, doesNotRecognize) {
            try ObjectRef(raw).send(doesNotRecognize, selector, as: Void.self)
        }
        return unrecognized(cls, selector)
    }

    /// The name of `obj`'s class past any hidden per-object class, read from the C class
    /// records only: the object may be deallocating on another thread, its hidden class with it.
    static func visibleClassName(of obj: sf_id) -> String? {
        sf_class_visible(sf_object_isa(obj)).map { String(cString: sf_class_getName($0)) }
    }

    static func visibleName(_ cls: sf_class_t) -> String {
        let c = RuntimeClass.from(cls)
        return c.isHidden ? (c.superclass ?? c).name : c.name
    }

    static func unrecognized(_ cls: sf_class_t, _ selector: Selector) -> RuntimeError {
        let c = RuntimeClass.from(cls)
        return .doesNotRecognizeSelector(.init(className: visibleName(cls), selector: selector.name, isClassMethod: c.isMetaclass))
    }
}

// MARK: - Errors raised inside IMPs

/// A C string returned by `methodSignatureForSelector:`, read without a copy (a `CString`
/// return copies, two allocations per forwarded call): it is used at once, before the send's
/// lent strings are drained, and is usually an interned signature's own types.
struct BorrowedCString: MessageReturn, WordRepresentable {
    let pointer: UnsafePointer<CChar>?
    static var returnEncoding: TypeEncoding { .cString }
    init(returnStorage: UnsafeRawPointer) { pointer = returnStorage.load(as: UnsafePointer<CChar>?.self) }
    func storeReturn(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: pointer, as: UnsafePointer<CChar>?.self) }
    var word: UInt64 { UInt64(UInt(bitPattern: pointer)) }
    init(word: UInt64) { pointer = UnsafePointer(bitPattern: UInt(word)) }
}
