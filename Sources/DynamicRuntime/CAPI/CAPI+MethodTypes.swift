import CDynamicRuntime
import Glibc

// method_getNumberOfArguments and friends. Types are read from the method's parsed signature,
// so they come out canonical, as sf_method_getTypeEncoding spells them.

private func methodSignature(_ m: sf_method_t?) throws(RuntimeError) -> Signature {
    guard let m, let sig = sf_method_sig(m) else { throw .nullArgument("a method") }
    return Signature(raw: sig)
}

/// The type at `index` (0 is self, 1 is _cmd), or nil when out of range.
private func argumentType(_ sig: Signature, _ index: UInt32) -> String? {
    let types = sig.argumentTypes
    return Int(index) < types.count ? types[Int(index)].encoding : nil
}

/// objc4's strncpy semantics: at most `length` bytes, zero-filled after the type.
private func copyType(_ type: String?, into dst: UnsafeMutablePointer<CChar>?, length: Int) {
    guard let dst, length > 0 else { return }
    memset(dst, 0, length)
    guard let type else { return }
    let bytes = Array(type.utf8)
    for i in 0..<min(bytes.count, length) { dst[i] = CChar(bitPattern: bytes[i]) }
}

/// The C function `sf_method_getNumberOfArguments` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_method_getNumberOfArguments")
@_spi(CAPI) public func sf_method_getNumberOfArguments_impl(_ m: sf_method_t?) -> UInt32 {
    capi(0) { () throws(RuntimeError) in UInt32(try methodSignature(m).argumentTypes.count) }
}

/// The C function `sf_method_copyReturnType` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_method_copyReturnType")
@_spi(CAPI) public func sf_method_copyReturnType_impl(_ m: sf_method_t?) -> UnsafeMutablePointer<CChar>? {
    capi(nil) { () throws(RuntimeError) in strdup(try methodSignature(m).returnType.encoding) }
}

/// The C function `sf_method_copyArgumentType` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_method_copyArgumentType")
@_spi(CAPI) public func sf_method_copyArgumentType_impl(_ m: sf_method_t?, _ index: UInt32) -> UnsafeMutablePointer<CChar>? {
    capi(nil) { () throws(RuntimeError) in
        let sig = try methodSignature(m)
        guard let type = argumentType(sig, index) else {
            let record = MethodRecord.from(m!)
            throw .invalidArgument(.init(className: record?.owningClass.visibleName, selector: record?.selector.name,
                                         isClassMethod: record?.owningClass.isMetaclass ?? false, expected: "an argument index in 0..<\(sig.argumentTypes.count) for '\(sig.encoding)' (self and _cmd included)",
                                         actual: "\(index)"))
        }
        return strdup(type)
    }
}

/// The C function `sf_method_getReturnType` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_method_getReturnType")
@_spi(CAPI) public func sf_method_getReturnType_impl(_ m: sf_method_t?, _ dst: UnsafeMutablePointer<CChar>?, _ length: Int) {
    let type = capi(nil) { () throws(RuntimeError) in try methodSignature(m).returnType.encoding }
    copyType(type, into: dst, length: length)
}

/// The C function `sf_method_getArgumentType` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_method_getArgumentType")
@_spi(CAPI) public func sf_method_getArgumentType_impl(_ m: sf_method_t?, _ index: UInt32, _ dst: UnsafeMutablePointer<CChar>?, _ length: Int) {
    let type = capi(nil) { () throws(RuntimeError) in argumentType(try methodSignature(m), index) }
    copyType(type, into: dst, length: length)
}
