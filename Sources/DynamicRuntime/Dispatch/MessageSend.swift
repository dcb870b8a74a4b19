import CDynamicRuntime

/// Message sending: the fast typed path (cache probe, signature key check, direct call) and
/// the general path through `ffi_call`. Both run inside a read-side section so that an IMP
/// replaced concurrently stays valid until the call returns.
@usableFromInline
enum MessageSend {
    /// The class a send starts its lookup at; nil for a super send from a root class.
    @inlinable @inline(__always)
    static func startClass(_ receiver: some MessageReceiver, _ raw: sf_id) -> sf_class_t? {
        startClass(lookupStart: receiver.lookupStart, isSuperSend: receiver.isSuperSend, raw)
    }

    /// `startClass` from the receiver's facts, for callers that hold no receiver.
    @inlinable @inline(__always)
    static func startClass(lookupStart: sf_class_t?, isSuperSend: Bool, _ raw: sf_id) -> sf_class_t? {
        if let lookupStart { return lookupStart }
        return isSuperSend ? nil : sf_object_isa(raw)
    }

    /// A typed send. `args` are the call's arguments as a tuple; `values` and `store` read them
    /// without capturing anything, so the closures that carry `args` to the general and miss
    /// paths are built on those paths only: the fast path (a cached method whose key is the
    /// call's) builds no closure context.
    @inlinable @inline(__always)
    static func typed<R: MessageReturn, Args>(
        _ receiver: some MessageReceiver, _ selector: Selector, key: UInt64, words: (UInt64, UInt64, UInt64, UInt64)?,
        count: Int, exact: Bool = false, args: Args, values: (Args) -> [any MessageArgument],
        store: (Args, Int, UnsafeMutableRawPointer) -> Void
    ) throws(RuntimeError) -> R {
        guard let raw = receiver.receiver.raw else { return zeroValue() }
        Runtime.discardStalePending()
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        let start = startClass(receiver, raw)
        // A typed key is never 0 and the cache markers' is: a hit whose key is the call's is a
        // real method of this signature, so the marker checks wait for the other paths.
        var probed: sf_method_t? = nil
        if let start, let words, R.returnKind != .other, key != 0 {
            probed = sf_cache_probe(start, selector.raw)
            if let m = probed, sf_method_key(m) == key {
                // The receiver's class for a body's error: the class just looked in, unless this is
                // a super send (read before the call: the body may free the receiver).
                let visible = receiver.lookupStart == nil ? start : sf_object_isa(raw)
                return try matchedCall(m, raw, selector.raw, visible, words, count: count)
            }
        }
        return try typedLookup(args, raw, selector, start: start, probed: probed, key: key, words: words, count: count,
                               exact: exact, values: values, store: store)
    }

    /// A typed send that is not a cache hit of its own key: the lookup, then the call or the
    /// miss. Out of line, with the arguments by value: the closures that carry them are built
    /// here, so the fast path above does not spill the arguments for them. The arguments come
    /// first, so that they arrive in registers: copied from the stack slots the caller had just
    /// filled word by word, they stalled the load that read them back (a tenth of a forwarded
    /// send). A miss on a selector whose resolver declined (the cached marker says so) tells the
    /// miss path, which then does not probe for it again.
    @inlinable @inline(never)
    static func typedLookup<R: MessageReturn, Args>(
        _ args: Args, _ raw: sf_id, _ selector: Selector, start: sf_class_t?, probed: sf_method_t?, key: UInt64,
        words: (UInt64, UInt64, UInt64, UInt64)?, count: Int, exact: Bool, values: (Args) -> [any MessageArgument],
        store: (Args, Int, UnsafeMutableRawPointer) -> Void
    ) throws(RuntimeError) -> R {
        // What the caller's probe found (a method of other types, a marker), else the lookup.
        let entry = probed ?? start.flatMap { sf_lookup_entry($0, selector.raw) }
        guard let cls = start, let method = entry, !sf_method_is_marker(method) else {
            let declined = entry == sf_declined_method_marker()
            // Stage 1 declined (cached): stage 2 is looked up here, and a register call is
            // forwarded without generic code in between.
            if declined, let cls = start, let stageSelector = sf_stage_selector(Int32(SF_STAGE_FORWARDING_TARGET)) {
                guard let stage = sf_lookup_method(cls, stageSelector) else {
                    guard MemoryLayout<R>.size <= 16 else {
                        return try typedMiss(raw, selector, cls: cls, key: key, words: words, count: count, exact: exact,
                                             fromStage: 3, values: { values(args) }, store: { store(args, $0, $1) })
                    }
                    // Stage 3 through a non-generic entry; strings lent on the way live until R
                    // has read them.
                    let lent = sf_lent_mark()
                    defer { sf_lent_drain(lent) }
                    let bytes = try forwardInvocationBytes(raw, selector, cls: cls, key: key, count: count,
                                                           exact: exact && R.returnEncoding.isExactInKey,
                                                           returning: R.returnEncoding, values: { values(args) },
                                                           store: { store(args, $0, $1) })
                    return withUnsafeBytes(of: bytes) { R(returnStorage: $0.baseAddress!) }
                }
                if let words, key != 0, R.returnKind != .other {
                    return try typedForward(args, raw, selector, cls: cls, stage: stage, key: key, words: words,
                                            count: count, exact: exact, values: values, store: store)
                }
            }
            return try typedMiss(raw, selector, cls: start, key: key, words: words, count: count, exact: exact,
                                 fromStage: declined ? 2 : 1, values: { values(args) }, store: { store(args, $0, $1) })
        }
        return try typedCall(raw, selector, cls: cls, method: method, key: key, words: words, count: count,
                             values: { values(args) }, store: { store(args, $0, $1) })
    }

    /// Calls a method a typed send found (read section held): a closure's word body directly,
    /// an IMP whose arguments all travel in integer registers without libffi, else `general`.
    @inlinable @inline(__always)
    static func typedCall<R: MessageReturn>(
        _ raw: sf_id, _ selector: Selector, cls: sf_class_t, method: sf_method_t, key: UInt64,
        words: (UInt64, UInt64, UInt64, UInt64)?, count: Int, values: () -> [any MessageArgument],
        store: (Int, UnsafeMutableRawPointer) -> Void
    ) throws(RuntimeError) -> R {
        let sigKey = sf_method_key(method)
        if sigKey == key, key != 0, let words, R.returnKind != .other {
            return try matchedCall(method, raw, selector.raw, sf_object_isa(raw), words, count: count)
        }
        return try general(raw, selector, cls: cls, method: method, count: count, values: values, store: store)
    }

    /// The call of a method whose key is the send's and whose arguments travel in integer
    /// registers: the closure's body directly, else the IMP as a C function. `visible` is the
    /// receiver's class read before the call (hidden classes are skipped only on an error).
    @inlinable @inline(__always)
    static func matchedCall<R: MessageReturn>(
        _ method: sf_method_t, _ raw: sf_id, _ sel: sf_sel, _ visible: sf_class_t?, _ words: (UInt64, UInt64, UInt64, UInt64),
        count: Int
    ) throws(RuntimeError) -> R {
        if let bits = try closureWords(method, raw, sel, words, count: count, receiverClass: visible) {
            return R.fromRegister(bits)
        }
        let r: R = callWords(sf_method_imp(method)!, raw, sel, words, count: count)
        if sf_get_pending_error() != nil { try Runtime.rethrowPending() }
        return r
    }

    /// Runs the method's closure body directly when its IMP is a closure with a word body (no
    /// slot, no libffi) and returns the return register's bits; nil otherwise. The record and
    /// its owner outlive the read section. Not generic: an `R?` would cost a metadata lookup
    /// where the caller is not specialized (the forwarding path).
    @inlinable @inline(__always)
    static func closureWords(_ method: sf_method_t, _ raw: sf_id, _ sel: sf_sel,
                             _ w: (UInt64, UInt64, UInt64, UInt64), count: Int,
                             receiverClass: sf_class_t?) throws(RuntimeError) -> UInt64? {
        // The record's owner and hook words live in the method's own struct, beside its key.
        guard let owner = UnsafeRawPointer(bitPattern: sf_method_owner_bits(method)) else { return nil }
        let o = UInt64(UInt(bitPattern: raw)), s = UInt64(UInt(bitPattern: sel))
        // A hooked entry names its hook, which runs its chain over the words (no trampoline, no
        // closure box in between); nil sends the rest through the slot.
        let hook = sf_method_hook_bits(method)
        if hook != 0 { return try hookSendWords(hook, o, s, w.0, w.1, w.2) }
        var failure: (any Error)? = nil
        let r: UInt64? = ObjectWord<ClosureIMP>(owner).withObject { box in
            do {
                // The keys matched, and an `Int` body's key is exactly its own: its arity is `count`.
                if let direct = box.direct { return try ClosureIMP.callDirect(direct, arity: count, o, w) }
                guard box.hasWordBody else { return nil }
                return try box.wordBody(o, s, w.0, w.1, w.2, w.3)
            } catch { failure = error; return 0 }
        }
        // The class was read before the body ran; walking it to the visible class now is safe
        // inside the read section (a class outlives it), even if the body freed the receiver.
        if let failure { throw ClosureIMP.failure(failure, receiverClass: sf_class_visible(receiverClass), s) }
        return r
    }

    @usableFromInline
    static func zeroValue<R: MessageReturn>() -> R {
        withUnsafeTemporaryAllocation(byteCount: 64, alignment: 16) { buf in
            buf.initializeMemory(as: UInt8.self, repeating: 0)
            return R(returnStorage: buf.baseAddress!)
        }
    }

    /// Calls an IMP whose arguments all travel in integer registers, without libffi.
    @inlinable @inline(__always)
    static func callWords<R: MessageReturn>(_ imp: sf_imp, _ obj: sf_id, _ sel: sf_sel,
                                            _ w: (UInt64, UInt64, UInt64, UInt64), count: Int) -> R {
        typealias W = UInt64
        switch R.returnKind {
        case .word, .other:
            let r: W
            switch count {
            case 0: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel) -> W).self)(obj, sel)
            case 1: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel, W) -> W).self)(obj, sel, w.0)
            case 2: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel, W, W) -> W).self)(obj, sel, w.0, w.1)
            case 3: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel, W, W, W) -> W).self)(obj, sel, w.0, w.1, w.2)
            default: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel, W, W, W, W) -> W).self)(obj, sel, w.0, w.1, w.2, w.3)
            }
            return R.fromRegister(r)
        case .double:
            let r: Double
            switch count {
            case 0: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel) -> Double).self)(obj, sel)
            case 1: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel, W) -> Double).self)(obj, sel, w.0)
            case 2: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel, W, W) -> Double).self)(obj, sel, w.0, w.1)
            case 3: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel, W, W, W) -> Double).self)(obj, sel, w.0, w.1, w.2)
            default: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel, W, W, W, W) -> Double).self)(obj, sel, w.0, w.1, w.2, w.3)
            }
            return R.fromRegister(r)
        case .float:
            let r: Float
            switch count {
            case 0: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel) -> Float).self)(obj, sel)
            case 1: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel, W) -> Float).self)(obj, sel, w.0)
            case 2: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel, W, W) -> Float).self)(obj, sel, w.0, w.1)
            case 3: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel, W, W, W) -> Float).self)(obj, sel, w.0, w.1, w.2)
            default: r = CFunction.cast(imp, to: (@convention(c) (sf_id, sf_sel, W, W, W, W) -> Float).self)(obj, sel, w.0, w.1, w.2, w.3)
            }
            return R.fromRegister(r)
        }
    }

    /// A typed send that found no method: the forwarding path, with the caller's types. Stage
    /// 1's method and stage 2's target are called as a typed send would call them (word bodies
    /// and direct calls, the target's own forwarding on a miss); only stages 3 and 4 lay out a
    /// frame, with a signature cached by the caller's types.
    // Called from clients' specialized sends, so unspecialized here: the common return types
    // get their own copies (no metadata lookups or witness calls per forwarded call).
    /// The general typed path: checks every type, then calls through libffi.
    @usableFromInline
    static func general<R: MessageReturn>(
        _ raw: sf_id, _ selector: Selector, cls: sf_class_t, method: sf_method_t, count: Int,
        values: () -> [any MessageArgument], store: (Int, UnsafeMutableRawPointer) -> Void
    ) throws(RuntimeError) -> R {
        // Strings lent for the arguments or by the method's return live until R has copied them.
        let lent = sf_lent_mark()
        defer { sf_lent_drain(lent) }
        let args = values()
        let argTypes = args.map(argumentType)
        let sig = Signature(raw: sf_method_sig(method))
        let expected = sig.argumentTypes.dropFirst(2)
        guard expected.count == argTypes.count,
              zip(expected, argTypes).allSatisfy({ $0.isCompatible(with: $1) }),
              sig.returnType.isCompatible(with: R.returnEncoding) || (R.returnEncoding == .void) else {
            let cl = RuntimeClass.from(cls)
            throw .signatureMismatch(.init(className: cl.visibleName, selector: selector.name, expected: sig.encoding, actual: Signature.encoding(returning: R.returnEncoding, arguments: argTypes)))
        }
        try checkByteCounts(args, sig, cls, selector)
        let imp = sf_method_imp(method)!
        let result: R = withReturnStorage(sig) { ret in
            withFrame(raw, selector, sig, count: count, store: store) { argv in
                sf_ffi_call(&sig.storage.raw.pointee.cif, imp, ret, argv)
            }
            if R.returnEncoding == .void, sig.returnType != .void {
                // The caller discards a value it did not ask for: drop an owned object.
                if sig.returnType.isRetainedObject, let o = ret.load(as: sf_id?.self) { sf_release_inline(o) }
            }
            return R(returnStorage: ret)
        }
        try Runtime.rethrowPending()
        return result
    }

    /// The type an argument travels as: a `DynamicValue`'s own case, else its static type.
    static func argumentType(_ arg: any MessageArgument) -> TypeEncoding {
        // A metatype comparison first: a dynamic cast per argument cost forwarded sends ~10%.
        let t = type(of: arg)
        return t == DynamicValue.self ? (arg as! DynamicValue).typeEncoding : t.typeEncoding
    }

    /// Refuses arguments whose bytes do not fill their slot exactly (a `DynamicValue.structure`
    /// brings its own byte count, which the type check alone does not bound) and strings that
    /// cannot cross as C strings.
    static func checkByteCounts(_ args: [any MessageArgument], _ sig: Signature, _ cls: sf_class_t,
                                _ selector: Selector) throws(RuntimeError) {
        for (i, arg) in args.enumerated() {
            let want = sig.argumentTypes[i + 2]
            let size = sig.storage.argumentSizes[i + 2]
            if type(of: arg) == DynamicValue.self, let value = arg as? DynamicValue {
                try value.checkByteCount(size: size, of: want, what: "argument \(i + 1)",
                                         className: Forwarding.visibleName(cls), selector: selector.name)
            } else if type(of: arg) == String.self, let offset = (arg as! String).offsetOfNUL {
                throw String.nulError(offset, className: Forwarding.visibleName(cls), selector: selector.name, argument: i + 1)
            } else if case .structure = want, type(of: arg).storageSize > size {
                throw .invalidArgument(.init(className: Forwarding.visibleName(cls), selector: selector.name, argument: i + 1, expected: "a \(size)-byte struct '\(want.encoding)'", actual: "\(type(of: arg).storageSize) bytes"))
            }
        }
    }

    /// A fully dynamic send: argument count and types checked against the method's signature.
    /// The receiver comes as its facts, so that no generic code runs per call; the arguments
    /// as the caller's buffer, copied into an array only off the register path.
    @usableFromInline
    static func dynamic(_ raw: sf_id?, lookupStart: sf_class_t?, isSuperSend: Bool, _ selector: Selector,
                        _ args: UnsafeBufferPointer<any MessageArgument>) throws(RuntimeError) -> DynamicValue {
        guard let raw else { return .void }
        Runtime.discardStalePending()
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        let start = startClass(lookupStart: lookupStart, isSuperSend: isSuperSend, raw)
        guard let cls = start, let method = sf_lookup_method(cls, selector.raw) else {
            let lent = sf_lent_mark()
            defer { sf_lent_drain(lent) }
            var result = DynamicValue.void
            try forwardMiss(raw, selector, cls: start, returning: .void, Array(args)) { ret, ran in
                result = DynamicValue.load(ran.returnType, from: ret, isReturn: true)
            }
            return result
        }
        // A super send names the receiver's own class in a body's error.
        let visible = lookupStart == nil ? cls : sf_object_isa(raw)
        if let value = try wordCall(raw, selector, visible: visible, method: method, args) { return value }
        return try call(raw, selector, cls: cls, method: method, Array(args))
    }

    /// A dynamic send whose arguments all travel in integer registers, as exact key codes that
    /// spell the method's own key, and whose return comes back in a register: the typed send's
    /// direct call, without libffi or a frame. nil leaves the call to `call`, which checks and
    /// reports every mismatch.
    @inline(__always)
    private static func wordCall(_ raw: sf_id, _ selector: Selector, visible: sf_class_t?, method: sf_method_t,
                                 _ args: UnsafeBufferPointer<any MessageArgument>) throws(RuntimeError) -> DynamicValue? {
        let key = sf_method_key(method)
        // The return's code is the key's low five bits; a C string is copied from lent
        // storage and a `long double` returns in x87 registers: both go through the frame.
        let returnCode = key & 31
        guard key != 0, args.count <= 4, returnCode != TypeEncoding.cString.keyCode,
              returnCode != TypeEncoding.longDouble.keyCode else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var argumentKey: UInt64 = 0
        for i in args.indices {
            guard let (code, word) = registerWord(args.baseAddress![i]) else { return nil }
            argumentKey |= code << UInt64(5 * (i + 1))
            switch i {
            case 0: words.0 = word
            case 1: words.1 = word
            case 2: words.2 = word
            default: words.3 = word
            }
        }
        guard argumentKey == key & ~31 else { return nil }
        switch returnCode {
        case TypeEncoding.float.keyCode:
            let r: Float = try matchedCall(method, raw, selector.raw, visible, words, count: args.count)
            return .float(r)
        case TypeEncoding.double.keyCode:
            let r: Double = try matchedCall(method, raw, selector.raw, visible, words, count: args.count)
            return .double(r)
        default:
            let r: UInt64 = try matchedCall(method, raw, selector.raw, visible, words, count: args.count)
            return DynamicValue.fromReturnWord(r, code: returnCode)
        }
    }

    /// An argument's key code and register value when it passes in a register and has a key
    /// code that only compatible types share (not a pointer's, which an array's shares, nor
    /// none). A `DynamicValue` answers for the value it holds.
    private static func registerWord<A: MessageArgument>(_ a: borrowing A) -> (UInt64, UInt64)? {
        if A.self == DynamicValue.self {
            return withUnsafePointer(to: a) { $0.withMemoryRebound(to: DynamicValue.self, capacity: 1) { $0.pointee.registerArgument } }
        }
        guard A.passesInWord else { return nil }
        let code = A.keyCode
        guard code != 0, code != TypeEncoding.pointerKeyCode else { return nil }
        return (code, a.argumentWord)
    }

    /// Calls `method` (found by a send, or given to `Method.invoke`) with checked arguments;
    /// inside a read-side section.
    static func call(_ raw: sf_id, _ selector: Selector, cls: sf_class_t, method: sf_method_t,
                     _ args: [any MessageArgument]) throws(RuntimeError) -> DynamicValue {
        let lent = sf_lent_mark()
        defer { sf_lent_drain(lent) }
        let sig = Signature(raw: sf_method_sig(method))
        // Checked in place against the signature's own list: no arrays, and the class is
        // named only for an error.
        let expected = sig.storage.argumentTypes
        guard expected.count - 2 == args.count else {
            throw .invalidArgument(.init(className: RuntimeClass.from(cls).visibleName, selector: selector.name, expected: "\(expected.count - 2) argument(s) for '\(sig.encoding)'", actual: "\(args.count)"))
        }
        for i in args.indices {
            let arg = args[i], want = expected[i + 2]
            let have = argumentType(arg)
            guard want.isCompatible(with: have) || (arg is DynamicValue && have == .pointer(nil) && want.keyCode == TypeEncoding.pointerKeyCode) else {
                throw .invalidArgument(.init(className: RuntimeClass.from(cls).visibleName, selector: selector.name, argument: i + 1, expected: "'\(want.encoding)'", actual: "'\(have.encoding)' (\(type(of: arg)))"))
            }
        }
        try checkByteCounts(args, sig, cls, selector)
        let imp = sf_method_imp(method)!
        let result = withReturnStorage(sig) { ret in
            withFrame(raw, selector, sig, count: args.count, store: { i, p in args[i].storeArgument(to: p) }) { argv in
                sf_ffi_call(&sig.storage.raw.pointee.cif, imp, ret, argv)
            }
            return DynamicValue.load(sig.returnType, from: ret, isReturn: true)
        }
        try Runtime.rethrowPending()
        return result
    }
}

/// The return type of void sends: returned in a register that is ignored.
@usableFromInline
struct NoReturn: MessageReturn {
    @usableFromInline static var returnEncoding: TypeEncoding { .void }
    @usableFromInline static var returnKeyCode: UInt64 { 1 }
    @usableFromInline static var returnKind: ReturnKind { .word }
    @usableFromInline init(returnStorage: UnsafeRawPointer) {}
    @usableFromInline init() {}
    @usableFromInline func storeReturn(to storage: UnsafeMutableRawPointer) {}
}
