import CShims
import Glibc

@_cdecl("sf_sel_registerName")
func sf_sel_registerName_impl(_ name: UnsafePointer<CChar>?) -> sf_sel? {
    guard let name else {
        RuntimeError.invalidArgument(className: "-", selector: "-", reason: "selector name is NULL").record()
        return nil
    }
    return SelectorTable.shared.intern(NameKey(cString: name))
}
