import CDynamicRuntime
import Glibc

/// The C API's invocation handles (`sf_invocation_t`).
package enum CInvocations {
    /// Every live handle: caller-owned (+1) ones and those lent to a callback.
    package static let table = CHandleTable<Invocation>(kind: "invocation")

    static func with<T>(_ inv: sf_invocation_t?, _ failure: T,
                        _ body: (Invocation) throws(RuntimeError) -> T) -> T {
        capi(failure) { () throws(RuntimeError) in try body(try table.lookup(inv)) }
    }

    static func status(_ inv: sf_invocation_t?, _ body: (Invocation) throws(RuntimeError) -> Void) -> sf_status {
        capiStatus { () throws(RuntimeError) in try body(try table.lookup(inv)) }
    }
}

/// The C function `sf_invocation_create` of SelectorForwarding.h.
@_cdecl("sf_invocation_create")
@_spi(CAPI) public func sf_invocation_create_impl(_ target: sf_id?, _ sel: sf_sel?, _ types: UnsafePointer<CChar>?) -> sf_invocation_t? {
    capi(nil) { () throws(RuntimeError) in
        let name = CAPIValues.className(of: target)
        let s = Selector(raw: try CAPIValues.nonNull(sel, "selector", className: name))
        let t = try CAPIValues.nonNull(types, "type encoding", className: name, selector: s.name)
        let sig = try Signature(String(cString: t))
        return CInvocations.table.insert(Invocation(signature: sig, target: ObjectRef(target), selector: s))
    }
}

/// The C function `sf_invocation_copy` of SelectorForwarding.h.
@_cdecl("sf_invocation_copy")
@_spi(CAPI) public func sf_invocation_copy_impl(_ inv: sf_invocation_t?) -> sf_invocation_t? {
    CInvocations.with(inv, nil) { src throws(RuntimeError) in
        let s = src.storage
        let copy = Invocation(signature: src.signature, target: src.target, selector: src.selector)
        let sizes = s.header.signature.argumentSizes
        for i in 2..<sizes.count {
            copy.storage.argumentPointer(i).copyMemory(from: s.argumentPointer(i), byteCount: sizes[i])
        }
        copy.storage.returnPointer.copyMemory(from: s.returnPointer, byteCount: s.header.signature.returnSize)
        if s.header.signature.returnType.isRetainedObject, let o = copy.storage.returnPointer.load(as: sf_id?.self) {
            sf_retain_inline(o)
            copy.storage.header.ownsReturnObject = true
        }
        copy.storage.header.implementation = s.header.implementation
        if s.header.argumentsRetained { copy.retainArguments() }
        return CInvocations.table.insert(copy)
    }
}

/// The C function `sf_invocation_release` of SelectorForwarding.h.
@_cdecl("sf_invocation_release")
@_spi(CAPI) public func sf_invocation_release_impl(_ inv: sf_invocation_t?) -> sf_status {
    capiStatus { () throws(RuntimeError) in try CInvocations.table.release(inv) }
}

/// The C function `sf_invocation_getTarget` of SelectorForwarding.h.
@_cdecl("sf_invocation_getTarget")
@_spi(CAPI) public func sf_invocation_getTarget_impl(_ inv: sf_invocation_t?) -> sf_id? {
    CInvocations.with(inv, nil) { $0.target.raw }
}

/// The C function `sf_invocation_setTarget` of SelectorForwarding.h.
@_cdecl("sf_invocation_setTarget")
@_spi(CAPI) public func sf_invocation_setTarget_impl(_ inv: sf_invocation_t?, _ target: sf_id?) -> sf_status {
    CInvocations.status(inv) { $0.target = ObjectRef(target) }
}

/// The C function `sf_invocation_getSelector` of SelectorForwarding.h.
@_cdecl("sf_invocation_getSelector")
@_spi(CAPI) public func sf_invocation_getSelector_impl(_ inv: sf_invocation_t?) -> sf_sel? {
    CInvocations.with(inv, nil) { $0.selector.raw }
}

/// The C function `sf_invocation_setSelector` of SelectorForwarding.h.
@_cdecl("sf_invocation_setSelector")
@_spi(CAPI) public func sf_invocation_setSelector_impl(_ inv: sf_invocation_t?, _ sel: sf_sel?) -> sf_status {
    CInvocations.status(inv) { i throws(RuntimeError) in
        i.selector = Selector(raw: try CAPIValues.nonNull(sel, "selector", className: i.className))
    }
}

/// The C function `sf_invocation_getTypeEncoding` of SelectorForwarding.h.
@_cdecl("sf_invocation_getTypeEncoding")
@_spi(CAPI) public func sf_invocation_getTypeEncoding_impl(_ inv: sf_invocation_t?) -> UnsafePointer<CChar>? {
    CInvocations.with(inv, nil) { UnsafePointer($0.signature.raw.pointee.types) }
}

/// The C function `sf_invocation_getArgumentCount` of SelectorForwarding.h.
@_cdecl("sf_invocation_getArgumentCount")
@_spi(CAPI) public func sf_invocation_getArgumentCount_impl(_ inv: sf_invocation_t?) -> Int {
    CInvocations.with(inv, -1) { $0.argumentCount }
}

/// The C function `sf_invocation_getArgument` of SelectorForwarding.h.
@_cdecl("sf_invocation_getArgument")
@_spi(CAPI) public func sf_invocation_getArgument_impl(_ inv: sf_invocation_t?, _ index: Int, _ value: UnsafeMutableRawPointer?, _ size: Int) -> sf_status {
    CInvocations.status(inv) { i throws(RuntimeError) in
        let (value, slot) = try CAPIValues.argument(value, i.signature, index, size, className: i.className, selector: i.selector.name)
        value.copyMemory(from: i.storage.argumentPointer(slot), byteCount: size)
    }
}

/// The C function `sf_invocation_setArgument` of SelectorForwarding.h.
@_cdecl("sf_invocation_setArgument")
@_spi(CAPI) public func sf_invocation_setArgument_impl(_ inv: sf_invocation_t?, _ index: Int, _ value: UnsafeRawPointer?, _ size: Int) -> sf_status {
    CInvocations.status(inv) { i throws(RuntimeError) in
        let (value, slot) = try CAPIValues.argument(value, i.signature, index, size, className: i.className, selector: i.selector.name)
        i.storage.setArgument(slot, type: i.signature.argumentTypes[slot]) { $0.copyMemory(from: value, byteCount: size) }
    }
}

/// The C function `sf_invocation_getReturnValue` of SelectorForwarding.h.
@_cdecl("sf_invocation_getReturnValue")
@_spi(CAPI) public func sf_invocation_getReturnValue_impl(_ inv: sf_invocation_t?, _ value: UnsafeMutableRawPointer?, _ size: Int) -> sf_status {
    CInvocations.status(inv) { i throws(RuntimeError) in
        guard let value = try CAPIValues.returnBuffer(value, i.signature, size, className: i.className, selector: i.selector.name) else { return }
        value.copyMemory(from: i.storage.returnPointer, byteCount: size)
    }
}

/// The C function `sf_invocation_setReturnValue` of SelectorForwarding.h.
@_cdecl("sf_invocation_setReturnValue")
@_spi(CAPI) public func sf_invocation_setReturnValue_impl(_ inv: sf_invocation_t?, _ value: UnsafeRawPointer?, _ size: Int) -> sf_status {
    CInvocations.status(inv) { i throws(RuntimeError) in
        guard let value = try CAPIValues.returnBuffer(value, i.signature, size, className: i.className, selector: i.selector.name) else { return }
        i.storage.clearReturn()
        i.storage.returnPointer.copyMemory(from: value, byteCount: size)
        if i.signature.returnType.isRetainedObject, let o = i.storage.returnPointer.load(as: sf_id?.self) {
            sf_retain_inline(o)
            i.storage.header.ownsReturnObject = true
        }
    }
}

/// The C function `sf_invocation_retainArguments` of SelectorForwarding.h.
@_cdecl("sf_invocation_retainArguments")
@_spi(CAPI) public func sf_invocation_retainArguments_impl(_ inv: sf_invocation_t?) -> sf_status {
    CInvocations.status(inv) { $0.retainArguments() }
}

/// The C function `sf_invocation_invoke` of SelectorForwarding.h.
@_cdecl("sf_invocation_invoke")
@_spi(CAPI) public func sf_invocation_invoke_impl(_ inv: sf_invocation_t?) -> sf_status {
    CInvocations.status(inv) { i throws(RuntimeError) in try i.invoke() }
}

/// The C function `sf_invocation_invokeWithTarget` of SelectorForwarding.h.
@_cdecl("sf_invocation_invokeWithTarget")
@_spi(CAPI) public func sf_invocation_invokeWithTarget_impl(_ inv: sf_invocation_t?, _ target: sf_id?) -> sf_status {
    CInvocations.status(inv) { i throws(RuntimeError) in try i.invoke(target: ObjectRef(target)) }
}
