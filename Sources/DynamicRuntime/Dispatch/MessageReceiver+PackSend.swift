import CDynamicRuntime

// Typed sends of any number of arguments. The fixed-arity sends (MessageReceiver+TypedSend
// .swift) are preferred by overload ranking where they apply, because their arguments reach
// the IMP in registers with every type known at compile time; Swift 6.3 does not specialise a
// loop over a parameter pack, so this path reads each argument through its protocol witnesses
// and calls the IMP through libffi.

extension MessageReceiver {
    /// A typed send of any number of arguments:
    /// `let r: Int = try obj.send("frame:x:y:w:h:depth:", 1, 2, 3, 4, 5, 6)`. The call's types
    /// must match the method's signature, or it throws `signatureMismatch`.
    @inlinable
    public func send<each A: MessageArgument, R: MessageReturn>(
        _ selector: Selector, _ arguments: repeat each A, as _: R.Type = R.self
    ) throws(RuntimeError) -> R {
        try MessageSend.packed(self, selector, repeat each arguments)
    }

    /// A typed send of any number of arguments to a void method:
    /// `try obj.send("set:y:w:h:depth:", 1, 2, 3, 4, 5, as: Void.self)`.
    @inlinable
    public func send<each A: MessageArgument>(
        _ selector: Selector, _ arguments: repeat each A, as _: Void.Type
    ) throws(RuntimeError) {
        let _: NoReturn = try MessageSend.packed(self, selector, repeat each arguments)
    }
}

extension MessageSend {
    /// A typed send of a pack of arguments: the signature key is built from the pack's types,
    /// then `packedSend` looks the method up and calls it.
    @inlinable
    static func packed<each A: MessageArgument, R: MessageReturn>(
        _ receiver: some MessageReceiver, _ selector: Selector, _ args: repeat each A
    ) throws(RuntimeError) -> R {
        guard let raw = receiver.receiver.raw else { return zeroValue() }
        var key = R.returnKeyCode
        var count = 0
        var exact = true
        for type in repeat (each A).self {
            count += 1
            let code = type.keyCode
            if code == 0 || count > 11 { key = 0 } else if key != 0 { key |= code << UInt64(5 * count) }
            exact = exact && type.keyIsExact
        }
        return try packedSend(raw, selector, start: startClass(receiver, raw), key: key, count: count, exact: exact,
                              values: {
                                  var values: [any MessageArgument] = []
                                  for arg in repeat each args { values.append(arg) }
                                  return values
                              },
                              store: { index, slot in
                                  var i = 0
                                  for arg in repeat each args {
                                      if i == index { arg.storeArgument(to: slot) }
                                      i += 1
                                  }
                              },
                              storeAll: { argv in
                                  var i = 2
                                  for arg in repeat each args {
                                      arg.storeArgument(to: argv[i]!)
                                      i += 1
                                  }
                              })
    }

    /// Looks the method up and calls it: through libffi without reading the arguments' types
    /// again when the method's key is the send's and names its types exactly (no allocation;
    /// `storeAll` writes every argument slot of the frame in one pass over the pack), else
    /// through `general` or the miss path, which check each argument and store it by index.
    @usableFromInline
    static func packedSend<R: MessageReturn>(
        _ raw: sf_id, _ selector: Selector, start: sf_class_t?, key: UInt64, count: Int, exact: Bool,
        values: () -> [any MessageArgument], store: (Int, UnsafeMutableRawPointer) -> Void,
        storeAll: (UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Void
    ) throws(RuntimeError) -> R {
        Runtime.discardStalePending()
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        guard let cls = start, let method = sf_lookup_method(cls, selector.raw) else {
            return try typedMiss(raw, selector, cls: start, key: key, words: nil, count: count, exact: exact,
                                 fromStage: 1, values: values, store: store)
        }
        guard exact, key != 0, sf_method_key(method) == key else {
            return try general(raw, selector, cls: cls, method: method, count: count, values: values, store: store)
        }
        let lent = sf_lent_mark()
        defer { sf_lent_drain(lent) }
        let sig = Signature(raw: sf_method_sig(method))
        let imp = sf_method_imp(method)!
        let storage = sig.storage
        let n = storage.argumentTypes.count
        let result: R = withReturnStorage(sig) { ret in
            withUnsafeTemporaryAllocation(byteCount: max(Int(storage.raw.pointee.frame_size), 16), alignment: 16) { frame in
                withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: n) { argv in
                    let base = frame.baseAddress!
                    for i in 0..<n { argv[i] = base + storage.argumentOffsets[i] }
                    argv[0]!.storeBytes(of: raw, as: sf_id.self)
                    argv[1]!.storeBytes(of: selector.raw, as: sf_sel.self)
                    storeAll(argv.baseAddress!)
                    sf_ffi_call(&storage.raw.pointee.cif, imp, ret, argv.baseAddress!)
                }
            }
            return R(returnStorage: ret)
        }
        try Runtime.rethrowPending()
        return result
    }
}
