import CDynamicRuntime

/// The miss path of a typed send: forwarding stages run with the caller's own types, and the
/// frame a stage-3 handler sees is laid out from them.
extension MessageSend {
    /// The miss of a typed send whose class has the resolver's refusal cached (the caller's
    /// lookup found it), defines `forwardingTargetForSelector:` (`stage`, found by the caller)
    /// and whose arguments and result travel in registers: stage 2 without generic code between
    /// the send and the target's method (`forwardWords`), the other stages through `typedMiss`.
    /// The closures that carry the arguments are built on the rarer ways only.
    @inlinable @inline(__always)
    static func typedForward<R: MessageReturn, Args>(
        _ args: Args, _ raw: sf_id, _ selector: Selector, cls: sf_class_t, stage: sf_method_t, key: UInt64,
        words: (UInt64, UInt64, UInt64, UInt64), count: Int, exact: Bool, values: (Args) -> [any MessageArgument],
        store: (Args, Int, UnsafeMutableRawPointer) -> Void
    ) throws(RuntimeError) -> R {
        // Strings the target's method returns are lent until R has copied them.
        let lent = sf_lent_mark()
        defer { sf_lent_drain(lent) }
        switch try DynamicRuntime.forwardWords(raw, selector, cls: cls, stage: stage, key: key, kind: R.returnKind,
                                               count: count, words) {
        case .returned(let bits):
            return R.fromRegister(bits)
        case .declined:
            return try typedMiss(raw, selector, cls: cls, key: key, words: words, count: count, exact: exact,
                                 fromStage: 3, values: { values(args) }, store: { store(args, $0, $1) })
        case .target(let target):
            defer { sf_release_inline(target) }
            return try typedTarget(target, selector, cls: cls, key: key, words: words, count: count, exact: exact,
                                   values: { values(args) }, store: { store(args, $0, $1) })
        }
    }

    /// What stage 2 did for a register call (`forwardWords`).
    @usableFromInline
    enum WordForward {
        /// The target's method ran: its return register.
        case returned(UInt64)
        /// No target named: stages 3 and 4 remain.
        case declined
        /// A +1 target whose method a register call of the send's key does not reach (its types
        /// differ, or the target forwards the message too).
        case target(sf_id)
    }

    /// Stage 2's send to a +1 target the caller holds (and releases), at a forwarding level of
    /// its own: the target's method, or the target's own forwarding.
    @usableFromInline @inline(never)
    @_specialize(where R == Int)
    @_specialize(where R == Double)
    @_specialize(where R == NoReturn)
    static func typedTarget<R: MessageReturn>(
        _ target: sf_id, _ selector: Selector, cls: sf_class_t, key: UInt64, words: (UInt64, UInt64, UInt64, UInt64)?,
        count: Int, exact: Bool, values: () -> [any MessageArgument], store: (Int, UnsafeMutableRawPointer) -> Void
    ) throws(RuntimeError) -> R {
        try Forwarding.guardDepth(cls, selector)
        defer { sf_forward_depth_exit() }
        return try sendToTarget(target, selector, key: key, words: words, count: count, exact: exact, values: values,
                                store: store)
    }

    /// The target's method for `selector` with the send's types, else its forwarding path.
    @inline(__always)
    static func sendToTarget<R: MessageReturn>(
        _ target: sf_id, _ selector: Selector, key: UInt64, words: (UInt64, UInt64, UInt64, UInt64)?,
        count: Int, exact: Bool, values: () -> [any MessageArgument], store: (Int, UnsafeMutableRawPointer) -> Void
    ) throws(RuntimeError) -> R {
        let targetClass = sf_object_isa(target)!
        guard let m = sf_lookup_method(targetClass, selector.raw) else {
            return try typedMiss(target, selector, cls: targetClass, key: key, words: words, count: count,
                                 exact: exact, fromStage: 1, values: values, store: store)
        }
        return try typedCall(target, selector, cls: targetClass, method: m, key: key, words: words, count: count,
                             values: values, store: store)
    }

    /// `fromStage`: 2 when the caller's lookup found the resolver's refusal cached (stage 1 is
    /// not probed for again), 3 when stage 2 ran too.
    @usableFromInline @inline(never)
    @_specialize(where R == Int)
    @_specialize(where R == Int32)
    @_specialize(where R == Bool)
    @_specialize(where R == Double)
    @_specialize(where R == NoReturn)
    @_specialize(where R == Object?)
    static func typedMiss<R: MessageReturn>(
        _ raw: sf_id, _ selector: Selector, cls: sf_class_t?, key: UInt64, words: (UInt64, UInt64, UInt64, UInt64)?,
        count: Int, exact: Bool, fromStage: Int, values: () -> [any MessageArgument],
        store: (Int, UnsafeMutableRawPointer) -> Void
    ) throws(RuntimeError) -> R {
        guard let cls else {
            // `[super dealloc]` from a root class: the root dealloc, as from any other class.
            if selector == RootDealloc.selector, R.returnEncoding == .void {
                RootDealloc.run(raw)
                try Runtime.rethrowPending()
                return zeroValue()
            }
            throw Forwarding.unrecognized(sf_object_isa(raw), selector)
        }
        // The lookup that missed may have run a `+initialize` that threw: the error is the send's.
        try Runtime.rethrowPending()
        // Strings lent on the way (arguments, a forwarded method's return) live until R has read them.
        let lent = sf_lent_mark()
        defer { sf_lent_drain(lent) }
        try Forwarding.guardDepth(cls, selector)
        defer { sf_forward_depth_exit() }
        return try Forwarding.earlyStages(
            raw, selector, cls: cls, from: fromStage,
            call: { (m) throws(RuntimeError) in
                try typedCall(raw, selector, cls: cls, method: m, key: key, words: words, count: count, values: values, store: store)
            },
            send: { (target) throws(RuntimeError) in
                try sendToTarget(target, selector, key: key, words: words, count: count, exact: exact, values: values, store: store)
            },
            rest: { () throws(RuntimeError) in
                try invocationMiss(raw, selector, cls: cls, key: key, count: count, exact: exact, values: values, store: store)
            })
    }

    /// Stages 3 and 4 of a typed miss (the caller holds a depth level and a lent mark). Apart
    /// from `typedMiss`: the frames and records laid out here cost stage 2, which needs none
    /// of them, a large stack frame on every forward.
    @inline(never)
    @_specialize(where R == Int)
    @_specialize(where R == Int32)
    @_specialize(where R == Bool)
    @_specialize(where R == Double)
    @_specialize(where R == NoReturn)
    @_specialize(where R == Object?)
    static func invocationMiss<R: MessageReturn>(
        _ raw: sf_id, _ selector: Selector, cls: sf_class_t, key: UInt64, count: Int, exact: Bool,
        values: () -> [any MessageArgument], store: (Int, UnsafeMutableRawPointer) -> Void
    ) throws(RuntimeError) -> R {
        // The result's bytes, not an `R?`: Optional<R>'s metadata would be looked up on every
        // call. Every typed return fits 16 bytes but structs, which take the general way.
        guard MemoryLayout<R>.size <= 16 else {
            return try largeMiss(raw, selector, cls: cls, values: values)
        }
        let bytes = try invocationBytes(raw, selector, cls: cls, key: key, count: count,
                                        exact: exact && R.returnEncoding.isExactInKey, returning: R.returnEncoding,
                                        values: values, store: store)
        return withUnsafeBytes(of: bytes) { R(returnStorage: $0.baseAddress!) }
    }

    /// Stages 3 and 4 for a result of at most 16 bytes, as bytes. `exact`: the key names the
    /// types exactly, the return type too; seen before, the frame is laid out from the caller's
    /// own values (`store`), with no argument array, type list or byte-count check.
    @inline(__always)
    static func invocationBytes(_ raw: sf_id, _ selector: Selector, cls: sf_class_t, key: UInt64, count: Int,
                                exact: Bool, returning: TypeEncoding, values: () -> [any MessageArgument],
                                store: (Int, UnsafeMutableRawPointer) -> Void) throws(RuntimeError) -> (UInt64, UInt64) {
        if exact, let known = sf_sig_cache_by_key(key) {
            switch try Forwarding.typedInvocationStages(raw, selector, cls: cls, known, count: count, store: store) {
            case let .returned(lo, hi):
                return (lo, hi)
            case let .declared(handler, declared):
                return try frameMiss(raw, selector, cls: cls, returning: returning, known: Signature(raw: known),
                                     answered: (handler, declared), count: count, values: values, store: store)
            case .forwardHandler:
                break
            }
        }
        return try frameMiss(raw, selector, cls: cls, returning: returning, known: nil, answered: nil,
                             count: count, values: values, store: store)
    }

    /// Stages 3-4 through a laid-out frame: for types the key does not name exactly, or a class
    /// that declares another signature (`answered`). Out of line: its frame and closures would
    /// otherwise be set up on every forward that takes the record path.
    @inline(never)
    private static func frameMiss(_ raw: sf_id, _ selector: Selector, cls: sf_class_t, returning: TypeEncoding,
                                  known: Signature?, answered: (handler: sf_method_t, declared: Signature)?, count: Int,
                                  values: () -> [any MessageArgument],
                                  store: (Int, UnsafeMutableRawPointer) -> Void) throws(RuntimeError) -> (UInt64, UInt64) {
        var bytes: (UInt64, UInt64) = (0, 0)
        if let known, let answered {
            try forwardFrame(raw, selector, cls: cls, known, count: count, store: store, fromStage: 3,
                             answered: answered) { ret, ran in
                keepResult(ret, ran, returning: returning, in: &bytes)
            }
        } else {
            try forwardMiss(raw, selector, cls: cls, returning: returning, values(), fromStage: 3) { ret, ran in
                keepResult(ret, ran, returning: returning, in: &bytes)
            }
        }
        return bytes
    }

    /// Stages 3-4 for a result bigger than 16 bytes. Apart so that `typedMiss` needs no
    /// `Optional<R>` metadata: it was looked up on every forwarded call, before the
    /// specialization check (a tenth of a forwarded call).
    @inline(never)
    private static func largeMiss<R: MessageReturn>(_ raw: sf_id, _ selector: Selector, cls: sf_class_t,
                                                    values: () -> [any MessageArgument]) throws(RuntimeError) -> R {
        var result: R? = nil
        try forwardMiss(raw, selector, cls: cls, returning: R.returnEncoding, values(), fromStage: 3) { ret, _ in
            result = R(returnStorage: ret)
        }
        return result!
    }

    /// Copies a forwarded call's result for a typed caller, dropping a +1 object a caller that
    /// asked for no value did not take.
    private static func keepResult(_ ret: UnsafeMutableRawPointer, _ ran: Signature, returning: TypeEncoding,
                                   in bytes: inout (UInt64, UInt64)) {
        if returning == .void, ran.storage.returnsObject, let o = ret.load(as: sf_id?.self) {
            sf_release_inline(o)
            return
        }
        withUnsafeMutableBytes(of: &bytes) { $0.copyMemory(from: UnsafeRawBufferPointer(start: ret, count: 16)) }
    }

    /// A send that found no method (typed or dynamic): lays out a frame from the caller's own
    /// types and runs the forwarding path. `load` reads the result, given the signature of what
    /// ran; a method returning more than a caller without a return type provided lands in a
    /// buffer of its own (freed here).
    /// `fromStage: 3` starts at `forwardInvocation:` (the caller ran stages 1 and 2 and holds a
    /// depth level).
    /// Not generic: the caller's `load` keeps its result (a generic one cost metadata lookups
    /// on every forwarded call).
    static func forwardMiss(_ raw: sf_id, _ selector: Selector, cls: sf_class_t?, returning: TypeEncoding,
                            _ args: [any MessageArgument], fromStage stage: Int = 1,
                            load: (UnsafeMutableRawPointer, Signature) -> Void) throws(RuntimeError) {
        // A super send from a root class has no class to look in (and none to forward from),
        // but for `dealloc`, whose root is the runtime's.
        guard let cls else {
            if selector == RootDealloc.selector, args.isEmpty {
                RootDealloc.run(raw)
                try Runtime.rethrowPending()
                return
            }
            throw Forwarding.unrecognized(sf_object_isa(raw), selector)
        }
        let sig = try frameSignature(returning: returning, args.map(argumentType))
        try checkByteCounts(args, sig, cls, selector)
        try forwardFrame(raw, selector, cls: cls, sig, count: args.count, store: { i, p in args[i].storeArgument(to: p) },
                         fromStage: stage, load: load)
    }

    /// The forwarding path for a frame laid out for `sig` by `store` (the caller checked the
    /// values against it). `answered`: stage 3 already found `forwardInvocation:` and asked
    /// `methodSignatureForSelector:`, which is not asked again.
    static func forwardFrame(_ raw: sf_id, _ selector: Selector, cls: sf_class_t, _ sig: Signature, count: Int,
                             store: (Int, UnsafeMutableRawPointer) -> Void, fromStage stage: Int,
                             answered: (handler: sf_method_t, declared: Signature)? = nil,
                             load: (UnsafeMutableRawPointer, Signature) -> Void) throws(RuntimeError) {
        var spill: UnsafeMutableRawPointer?
        defer { spill?.deallocate() }
        try withReturnStorage(sig) { ret throws(RuntimeError) in
            let ran = try withFrame(raw, selector, sig, count: count, store: store) { argv throws(RuntimeError) in
                try withUnsafeMutablePointer(to: &spill) { (spill) throws(RuntimeError) in
                    let frame = SwiftFrame(signature: sig, arguments: argv, returnValue: ret, spill: spill)
                    if let answered {
                        return try Forwarding.invocationStage(raw, selector, cls: cls, frame: frame,
                                                              handler: answered.handler, declared: answered.declared)
                    }
                    if stage == 3 { return try Forwarding.invocationStages(raw, selector, cls: cls, frame: frame) }
                    return try Forwarding.handleMiss(raw, selector, cls: cls, frame: frame)
                }
            }
            load(spill ?? ret, ran)
        }
    }

    /// The signature a caller's own types imply: from the lock-free cache when the packed key
    /// names the types exactly (no `long`, pointer or struct, whose codes are shared), else built.
    static func frameSignature(returning: TypeEncoding, _ types: [TypeEncoding]) throws(RuntimeError) -> Signature {
        var key = returning.keyCode
        var exact = key != 0 && types.count <= 11 && returning.isExactInKey
        if exact {
            for (i, t) in types.enumerated() {
                guard t.isExactInKey else { exact = false; break }
                key |= t.keyCode << UInt64(5 * (i + 1))
            }
        }
        if exact, let known = sf_sig_cache_by_key(key) { return Signature(raw: known) }
        let sig = try Signature(Signature.encoding(returning: returning, arguments: types))
        if exact, sig.raw.pointee.key == key { sf_sig_cache_put_key(sig.raw) }
        return sig
    }

    /// Zeroed storage big enough for the signature's return value.
    @inline(__always)
    static func withReturnStorage<T, E: Error>(_ sig: Signature, _ body: (UnsafeMutableRawPointer) throws(E) -> T) throws(E) -> T {
        let size = max(sig.storage.returnSize, 16)
        do {
            return try withUnsafeTemporaryAllocation(byteCount: size, alignment: 16) { buf in
                buf.initializeMemory(as: UInt8.self, repeating: 0)
                return try body(buf.baseAddress!)
            }
        } catch let error as E {
            throw error
        } catch {
            preconditionFailure("unreachable: \(error)")
        }
    }

    /// An argument frame laid out for `sig`: receiver, selector, then `store(i, slot)`.
    @inline(__always)
    static func withFrame<T, E: Error>(_ raw: sf_id, _ selector: Selector, _ sig: Signature, count: Int,
                                       store: (Int, UnsafeMutableRawPointer) -> Void,
                                       _ body: (UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(E) -> T) throws(E) -> T {
        let storage = sig.storage
        let n = storage.argumentTypes.count
        do {
            return try withUnsafeTemporaryAllocation(byteCount: max(Int(storage.raw.pointee.frame_size), 16), alignment: 16) { frame in
                try withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: n) { argv in
                    let base = frame.baseAddress!
                    for i in 0..<n { argv[i] = base + storage.argumentOffsets[i] }
                    argv[0]!.storeBytes(of: raw, as: sf_id.self)
                    argv[1]!.storeBytes(of: selector.raw, as: sf_sel.self)
                    for i in 0..<min(count, n - 2) { store(i, argv[i + 2]!) }
                    return try body(argv.baseAddress!)
                }
            }
        } catch let error as E {
            throw error
        } catch {
            preconditionFailure("unreachable: \(error)")
        }
    }
}

/// Stages 3 and 4 of a typed send whose class declined stage 1 (cached) and defines no
/// `forwardingTargetForSelector:`, for a result of at most 16 bytes: `typedMiss` from stage 3
/// without its generic entry. The caller holds a lent mark until it has read the result.
@usableFromInline @inline(never)
func forwardInvocationBytes(_ raw: sf_id, _ selector: Selector, cls: sf_class_t, key: UInt64, count: Int,
                            exact: Bool, returning: TypeEncoding, values: () -> [any MessageArgument],
                            store: (Int, UnsafeMutableRawPointer) -> Void) throws(RuntimeError) -> (UInt64, UInt64) {
    // The lookup that missed may have run a `+initialize` that threw: the error is the send's.
    try Runtime.rethrowPending()
    try Forwarding.guardDepth(cls, selector)
    defer { sf_forward_depth_exit() }
    return try MessageSend.invocationBytes(raw, selector, cls: cls, key: key, count: count, exact: exact,
                                           returning: returning, values: values, store: store)
}

/// Stage 2 of a register call (stage 1 declined, as cached): asks `forwardingTargetForSelector:`
/// and calls the target's method as a cache hit of the send's key would. Not generic, so a
/// client's send reaches it without the generic entry of `typedMiss`. A free function: as a
/// static one, its unused metatype was dropped by a thunk that copied the stack arguments
/// again, with loads that stalled on the caller's stores.
@usableFromInline @inline(never)
func forwardWords(_ raw: sf_id, _ selector: Selector, cls: sf_class_t, stage: sf_method_t, key: UInt64,
                  kind: ReturnKind, count: Int,
                  _ w: (UInt64, UInt64, UInt64, UInt64)) throws(RuntimeError) -> MessageSend.WordForward {
    try Forwarding.guardDepth(cls, selector)
    defer { sf_forward_depth_exit() }
    guard let target = try Forwarding.askForwardingTarget(stage, raw, selector, cls) else { return .declined }
    let targetClass = sf_object_isa(target)!
    guard let m = sf_lookup_method(targetClass, selector.raw), sf_method_key(m) == key else { return .target(target) }
    defer { sf_release_inline(target) }
    if let bits = try MessageSend.closureWords(m, target, selector.raw, w, count: count, receiverClass: targetClass) {
        return .returned(bits)
    }
    let imp = sf_method_imp(m)!
    let bits: UInt64
    switch kind {
    case .double:
        let d: Double = MessageSend.callWords(imp, target, selector.raw, w, count: count)
        bits = d.bitPattern
    case .float:
        let f: Float = MessageSend.callWords(imp, target, selector.raw, w, count: count)
        bits = UInt64(f.bitPattern)
    case .word, .other:
        bits = MessageSend.callWords(imp, target, selector.raw, w, count: count)
    }
    if sf_get_pending_error() != nil { try Runtime.rethrowPending() }
    return .returned(bits)
}
