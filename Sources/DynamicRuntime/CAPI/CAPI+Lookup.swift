import CDynamicRuntime

/// The C function `sf_object_getMethodImplementation` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_object_getMethodImplementation")
@_spi(CAPI) public func sf_object_getMethodImplementation_impl(_ obj: sf_id?, _ sel: sf_sel?) -> sf_imp? {
    guard let obj, let sel else {
        return fail(.nullArgument("an object and a selector"), nil)
    }
    return RuntimeClass.from(sf_object_isa(obj)!).methodImplementation(for: Selector(raw: sel)).pointer
}

/// The C function `sf_class_getClassMethod` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_getClassMethod")
@_spi(CAPI) public func sf_class_getClassMethod_impl(_ cls: sf_class_t?, _ sel: sf_sel?) -> sf_method_t? {
    guard let cls, let sel else { return nil }
    return sf_class_getInstanceMethod(RuntimeClass.from(cls).metaclass.raw, sel)
}

/// The C function `sf_sel_lookUpName` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_sel_lookUpName")
@_spi(CAPI) public func sf_sel_lookUpName_impl(_ name: UnsafePointer<CChar>?) -> sf_sel? {
    guard let name else { return nil }
    return Selector.lookUp(String(cString: name))?.raw
}
