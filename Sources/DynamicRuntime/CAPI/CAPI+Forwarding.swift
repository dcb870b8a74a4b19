import CDynamicRuntime

/// The C function `sf_class_getMethodImplementation` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_getMethodImplementation")
@_spi(CAPI) public func sf_class_getMethodImplementation_impl(_ cls: sf_class_t?, _ sel: sf_sel?) -> sf_imp? {
    guard let cls, let sel else {
        return fail(.nullArgument("a class and a selector"), nil)
    }
    return RuntimeClass.from(cls).methodImplementation(for: Selector(raw: sel)).pointer
}
