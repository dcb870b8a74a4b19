import CDynamicRuntime

/// The C function `sf_registerSmallObjectClass_np` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_registerSmallObjectClass_np")
@_spi(CAPI) public func sf_registerSmallObjectClass_np_impl(_ cls: sf_class_t?, _ tag: UInt32) -> Bool {
    guard let cls else { return fail(.nullArgument("a class"), false) }
    do throws(RuntimeError) {
        try RuntimeClass.from(cls).registerSmallObjectClass(tag: Int(tag))
        succeed()
        return true
    } catch {
        return fail(error, false)
    }
}
