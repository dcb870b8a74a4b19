import CDynamicRuntime
import Glibc

/// The C function `sf_sel_registerName` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_sel_registerName")
@_spi(CAPI) public func sf_sel_registerName_impl(_ name: UnsafePointer<CChar>?) -> sf_sel? {
    guard let name else {
        RuntimeError.nullArgument("a selector name").record()
        return nil
    }
    return SelectorTable.shared.intern(NameKey(cString: name))
}
