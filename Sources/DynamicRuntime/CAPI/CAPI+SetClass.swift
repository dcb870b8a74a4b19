import CDynamicRuntime

/// The C function `sf_object_setClass` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_object_setClass")
@_spi(CAPI) public func sf_object_setClass_impl(_ obj: sf_id?, _ cls: sf_class_t?) -> sf_class_t? {
    guard let obj, let cls else {
        return fail(.nullArgument("an object and a class"), nil)
    }
    do {
        let previous = try ObjectRef(obj).setClass(RuntimeClass.from(cls))
        succeed()
        return previous.raw
    } catch {
        return fail(error, nil)
    }
}
