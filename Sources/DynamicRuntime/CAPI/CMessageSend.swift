import CDynamicRuntime

/// The C function `sf_msg_send` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_msg_send")
@_spi(CAPI) public func sf_msg_send_impl(_ obj: sf_id?, _ sel: sf_sel?, _ ret: UnsafeMutableRawPointer?,
                      _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> sf_status {
    guard let obj else {
        // No RuntimeError case carries this code: record it directly so that the return value
        // and sf_last_error() agree.
        sf_set_last_error(SF_ERR_NIL_RECEIVER, "message sent to a NULL receiver")
        return SF_ERR_NIL_RECEIVER
    }
    guard let sel else { return fail(.nullArgument("a selector"), SF_ERR_INVALID_ARGUMENT) }
    Runtime.discardStalePending()
    do {
        try CMessageSend.send(obj, Selector(raw: sel), ret: ret, args: args)
        succeed()
        return SF_OK
    } catch {
        return fail(error, error.code)
    }
}

/// `sf_msg_send`: the frame comes from C, one pointer per explicit argument.
enum CMessageSend {
    /// The size of `sig`'s return type: what the C API writes into a caller's buffer.
    static func returnBytes(_ sig: Signature) -> Int {
        sig.returnType == .void ? 0 : Int(sf_ffi_type_size(sig.storage.raw.pointee.cif.rtype))
    }

    static func send(_ obj: sf_id, _ selector: Selector, ret: UnsafeMutableRawPointer?,
                     args: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) throws(RuntimeError) {
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        let cls = sf_object_isa(obj)!
        guard let method = sf_lookup_method(cls, selector.raw) else {
            try Forwarding.handleMiss(obj, selector, cls: cls, frame: CFrame(arguments: args, returnValue: ret))
            return
        }
        try call(obj, selector, cls: cls, method: method, ret: ret, args: args)
    }

    /// Calls `method` with the C caller's frame (a send's hit, or `sf_method_invoke`), inside a
    /// read-side section.
    static func call(_ obj: sf_id, _ selector: Selector, cls: sf_class_t, method: sf_method_t, ret: UnsafeMutableRawPointer?,
                     args: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) throws(RuntimeError) {
        let sig = Signature(raw: sf_method_sig(method))
        let n = sig.argumentTypes.count
        if n > 2, args == nil {
            throw .invalidArgument(.init(className: RuntimeClass.from(cls).visibleName, selector: selector.name, operation: "args", expected: "\(n - 2) argument pointer(s) for '\(sig.encoding)'", actual: "NULL"))
        }
        if sig.returnType != .void, ret == nil {
            throw .invalidArgument(.init(className: RuntimeClass.from(cls).visibleName, selector: selector.name, operation: "ret", expected: "storage for a '\(sig.returnType.encoding)' return value", actual: "NULL"))
        }
        var receiver: sf_id? = obj
        var sel: sf_sel? = selector.raw
        try withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: n) { argv throws(RuntimeError) in
            try withUnsafeMutablePointer(to: &receiver) { r throws(RuntimeError) in
                try withUnsafeMutablePointer(to: &sel) { s throws(RuntimeError) in
                    argv[0] = UnsafeMutableRawPointer(r)
                    argv[1] = UnsafeMutableRawPointer(s)
                    for i in 2..<n {
                        guard let a = args![i - 2] else {
                            throw .invalidArgument(.init(className: RuntimeClass.from(cls).visibleName, selector: selector.name, argument: i - 1, expected: "a pointer to the value", actual: "NULL"))
                        }
                        argv[i] = a
                    }
                    try MessageSend.withReturnStorage(sig) { (tmp: UnsafeMutableRawPointer) throws(RuntimeError) in
                        sf_ffi_call(&sig.storage.raw.pointee.cif, sf_method_imp(method)!, tmp, argv.baseAddress!)
                        // libffi writes a whole word for a small integer; the caller's buffer
                        // holds exactly the return type (`int ret`).
                        if let ret { ret.copyMemory(from: tmp, byteCount: CMessageSend.returnBytes(sig)) }
                    }
                    try Runtime.rethrowPending()
                }
            }
        }
    }
}
