import CDynamicRuntime

/// IMPs from closures that are not bound to a class (`imp_implementationWithBlock`,
/// `imp_getBlock`): made once, installed with `addMethod(_:implementation:types:)`,
/// `replaceMethod` or `sf_method_setImplementation` in any number of classes. Every method
/// holding one keeps it alive; it is freed (its trampoline slot reused only after a grace
/// period) when the last method and the last `IMP` value let go.
extension IMP {
    /// An IMP that runs `rawBody` for calls of signature `types`; see
    /// `RuntimeClass.addMethod(_:types:rawBody:)` for what the body receives.
    ///
    /// - Throws: an encoding error for `types`.
    public init(types: String, rawBody: @escaping @Sendable (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws -> Void) throws(RuntimeError) {
        self = try ClosureIMP(signature: Signature(types), body: rawBody).imp
    }

    /// An IMP for a method with no arguments, typed by the closure.
    public static func closure<R: MessageReturn>(_ body: @escaping @Sendable (ObjectRef) throws -> R) throws(RuntimeError) -> IMP {
        try make(R.returnEncoding, []) { ret, args in try body(ObjectRef(argumentStorage: args[0]!)).storeReturn(to: ret, of: args) }
    }

    /// An IMP for a method with one argument, typed by the closure.
    public static func closure<A: MessageArgument, R: MessageReturn>(_ body: @escaping @Sendable (ObjectRef, A) throws -> R) throws(RuntimeError) -> IMP {
        try make(R.returnEncoding, [A.typeEncoding]) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2)).storeReturn(to: ret, of: args)
        }
    }

    /// An IMP for a method with two arguments, typed by the closure.
    public static func closure<A: MessageArgument, B: MessageArgument, R: MessageReturn>(
        _ body: @escaping @Sendable (ObjectRef, A, B) throws -> R
    ) throws(RuntimeError) -> IMP {
        try make(R.returnEncoding, [A.typeEncoding, B.typeEncoding]) { ret, args in
            try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2), B.argument(args, 3)).storeReturn(to: ret, of: args)
        }
    }

    /// An IMP for a method with one argument that returns nothing.
    public static func closure<A: MessageArgument>(_ body: @escaping @Sendable (ObjectRef, A) throws -> Void) throws(RuntimeError) -> IMP {
        try make(.void, [A.typeEncoding]) { _, args in try body(ObjectRef(argumentStorage: args[0]!), A.argument(args, 2)) }
    }

    private static func make(_ returns: TypeEncoding, _ arguments: [TypeEncoding], _ body: @escaping ClosureBody) throws(RuntimeError) -> IMP {
        try ClosureIMP(signature: Signature(Signature.encoding(returning: returns, arguments: arguments)), body: body).imp
    }

    /// The signature a closure IMP reads its arguments by; nil for a C function.
    public var closureSignature: Signature? { owner?.signature }

    /// The body a closure IMP runs (`imp_getBlock`); nil for a C function.
    public var closureBody: ((UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws -> Void)? { owner?.body }
}

/// The IMPs C made with `sf_imp_implementationWithFunction`, by address: a C caller holds a
/// bare pointer, so this table holds the owner until `sf_imp_removeFunction` (lock held).
enum UnboundIMPs {
    struct Entry {
        let box: ClosureIMP
        let function: sf_function_fn
        let context: CFunctionContext
    }

    nonisolated(unsafe) static var byAddress: [UnsafeRawPointer: Entry] = [:]

    /// `imp` with its owner when C made it and dropped the owner (lock held); refuses a
    /// closure IMP whose signature differs from `sig`.
    static func resolveNolock(_ imp: IMP, for sig: Signature, className: String, selector: Selector) throws(RuntimeError) -> IMP {
        Runtime.state.lock.assertHeld()
        var resolved = imp
        if imp.owner == nil, !byAddress.isEmpty, let entry = byAddress[imp.address] {
            resolved = entry.box.imp
        }
        if let own = resolved.closureSignature, !own.isCompatible(with: sig) {
            throw .signatureMismatch(.init(className: className, selector: selector.name, operation: "the closure IMP",
                                           expected: sig.encoding, actual: own.encoding))
        }
        return resolved
    }
}
