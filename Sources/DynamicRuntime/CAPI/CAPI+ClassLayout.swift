import CDynamicRuntime

/// The C function `sf_class_setSuperclass` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_setSuperclass")
@_spi(CAPI) public func sf_class_setSuperclass_impl(_ cls: sf_class_t?, _ newSuper: sf_class_t?) -> sf_class_t? {
    guard let cls, let newSuper else {
        return fail(.nullArgument("a class and a new superclass"), nil)
    }
    do {
        let old = try RuntimeClass.from(cls).setSuperclass(RuntimeClass.from(newSuper))
        succeed()
        return old.raw
    } catch {
        return fail(error, nil)
    }
}

/// The C function `sf_class_createInstanceWithExtraBytes` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_createInstanceWithExtraBytes")
@_spi(CAPI) public func sf_class_createInstanceWithExtraBytes_impl(_ cls: sf_class_t?, _ extraBytes: Int) -> sf_id? {
    guard let cls else { return fail(.nullArgument("a class"), nil) }
    do {
        // size_t arrives as Int: a huge request reads as negative and is refused as out of range.
        let obj = try RuntimeClass.from(cls).createInstance(extraBytes: extraBytes)
        sf_retain_inline(obj.raw)
        succeed()
        return obj.raw
    } catch {
        return fail(error, nil)
    }
}

/// The C function `sf_object_getIndexedIvars` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_object_getIndexedIvars")
@_spi(CAPI) public func sf_object_getIndexedIvars_impl(_ obj: sf_id?) -> UnsafeMutableRawPointer? {
    guard let obj else { return nil }
    return ObjectRef(obj).indexedIvars
}

/// The C function `sf_method_invoke` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_method_invoke")
@_spi(CAPI) public func sf_method_invoke_impl(_ m: sf_method_t?, _ receiver: sf_id?, _ ret: UnsafeMutableRawPointer?,
                                               _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> sf_status {
    guard let m, let record = MethodRecord.from(m) else {
        return fail(.invalidArgument(.init(expected: "a runtime method", actual: "NULL or another pointer")), SF_ERR_INVALID_ARGUMENT)
    }
    let method = Method(record: record)
    Runtime.discardStalePending()
    do {
        let obj = try method.checkedReceiver(receiver)
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        try CMessageSend.call(obj, method.selector, cls: record.owningClass.raw, method: m, ret: ret, args: args)
        succeed()
        return SF_OK
    } catch {
        return fail(error, error.code)
    }
}
