import CDynamicRuntime

/// Adding, replacing, exchanging and removing methods. All writers take the runtime lock;
/// senders never do.
extension RuntimeClass {
    /// Adds a method whose implementation is a C function (or any IMP).
    ///
    /// - Throws: `methodExists` if this class already defines it, or an encoding error.
    @discardableResult
    public func addMethod(_ selector: Selector, implementation: IMP, types: String) throws(RuntimeError) -> Method {
        let sig = try Signature(types)
        return try install(selector, implementation, sig, replacing: false).method
    }

    /// Replaces (or adds) a method's implementation and returns the previous one, which stays
    /// callable for as long as the returned value is held. Nil when the method was added.
    @discardableResult
    public func replaceMethod(_ selector: Selector, implementation: IMP, types: String) throws(RuntimeError) -> IMP? {
        let sig = try Signature(types)
        return try install(selector, implementation, sig, replacing: true).previous
    }

    /// Removes this class's own method; sends then find the inherited one, if any.
    public func removeMethod(_ selector: Selector) throws(RuntimeError) {
        try Runtime.state.lock.withLock { () throws(RuntimeError) in
            guard let record = methods[selector] else {
                throw .noSuchMethod(.init(className: name, selector: selector.name))
            }
            if record.hook != nil {
                throw .hookFailed(.init(className: visibleName, selector: selector.name, reason: "remove its hooks before removing the method"))
            }
            methods[selector] = nil
            flushCaches()
            // Senders may still hold the entry: the record (and its C struct) outlives the
            // grace period, and any `Method` value that refers to it.
            Runtime.state.retire { _ = record }
        }
        Runtime.state.collectGarbage()
    }

    /// Swaps the implementations of two of this class's methods (or inherited ones, which are
    /// first copied into this class so the superclass is left alone). Signatures must agree.
    public func exchangeImplementations(_ a: Selector, _ b: Selector) throws(RuntimeError) {
        try Runtime.state.lock.withLock { () throws(RuntimeError) in
            guard let ma = findMethod(a) else { throw .noSuchMethod(.init(className: name, selector: a.name)) }
            guard let mb = findMethod(b) else { throw .noSuchMethod(.init(className: name, selector: b.name)) }
            guard ma.signature == mb.signature else {
                throw .signatureMismatch(.init(className: name, selector: b.name, expected: ma.signature.encoding, actual: mb.signature.encoding))
            }
            if ma.hook != nil || mb.hook != nil {
                throw .hookFailed(.init(className: visibleName, selector: (ma.hook != nil ? a : b).name, reason: "remove its hooks before exchanging implementations"))
            }
            let ra = ownRecord(for: ma)
            let rb = ownRecord(for: mb)
            let impA = ra.imp
            let impB = rb.exchange(with: impA)
            _ = ra.exchange(with: impB)
        }
    }

    /// This class's own record for an inherited method, copied in on first need (lock held).
    func ownRecord(for inherited: MethodRecord) -> MethodRecord {
        Runtime.state.lock.assertHeld()
        if inherited.owningClass === self { return inherited }
        let record = MethodRecord(selector: inherited.selector, signature: inherited.signature,
                                  imp: inherited.imp, in: self)
        methods[inherited.selector] = record
        flushCaches()
        return record
    }

    @usableFromInline @discardableResult
    func install(_ selector: Selector, _ imp: IMP, _ sig: Signature,
                 replacing: Bool) throws(RuntimeError) -> (method: Method, previous: IMP?) {
        try checkReserved(selector, sig)
        let result = try Runtime.state.lock.withLock { () throws(RuntimeError) -> (Method, IMP?) in
            // A bare pointer made by sf_imp_implementationWithFunction gets its owner back, and a
            // closure IMP must be installed with the signature it reads its arguments by.
            let imp = try UnboundIMPs.resolveNolock(imp, for: sig, className: name, selector: selector)
            if let existing = methods[selector] {
                guard replacing else { throw .methodExists(.init(className: name, selector: selector.name)) }
                guard Self.replacement(sig, fits: existing.signature) else {
                    throw .signatureMismatch(.init(className: name, selector: selector.name, expected: existing.signature.encoding, actual: sig.encoding))
                }
                if let hook = existing.hook {
                    // Keep the trampoline in place: the hook now wraps the new implementation.
                    return (Method(record: existing), hook.replaceOriginal(with: imp))
                }
                // Readers that loaded the old IMP may still be about to call it: exchange retires
                // the old IMP's owner with a grace period.
                return (Method(record: existing), existing.exchange(with: imp))
            }
            let record = MethodRecord(selector: selector, signature: sig, imp: imp, in: self)
            methods[selector] = record
            flushCaches()
            return (Method(record: record), nil)
        }
        if isMetaclass, selector == Forwarding.resolveInstanceMethod || selector == Forwarding.resolveClassMethod {
            Runtime.state.lock.withLock { resolverChanged() }
        }
        Runtime.state.collectGarbage()
        return result
    }

    /// Whether an implementation of `new` may replace one of `existing`: callers of the old
    /// one pass arguments the new one reads the same way.
    static func replacement(_ new: Signature, fits existing: Signature) -> Bool {
        existing.storage.key == new.storage.key && existing.argumentTypes.count == new.argumentTypes.count
            && zip(existing.argumentTypes, new.argumentTypes).allSatisfy { $0.isCompatible(with: $1) }
            && existing.returnType.isCompatible(with: new.returnType)
    }

    /// Selectors no method may define: the runtime destructs ivars itself.
    static let reservedSelectors: Set<String> = [".cxx_destruct"]

    /// Selectors the runtime gives a meaning to and whose shape it must be able to trust:
    /// `dealloc` is an instance method taking and returning nothing (`v@:`), as the root's.
    func checkReserved(_ selector: Selector, _ sig: Signature? = nil) throws(RuntimeError) {
        try RuntimeClass.checkReserved(selector, className: name)
        if let sig, selector == RootDealloc.selector {
            if isMetaclass {
                throw .reservedSelector(.init(className: name, selector: selector.name, reason: "dealloc is an instance method; a class method of that name is never sent"))
            }
            if sig.returnType != .void || sig.argumentTypes.count != 2 {
                throw .signatureMismatch(.init(className: name, selector: selector.name, expected: RootDealloc.encoding, actual: sig.encoding))
            }
        }
    }

    /// The reserved-name check, for a class known by name only (a hook waiting for it).
    static func checkReserved(_ selector: Selector, className: String) throws(RuntimeError) {
        if reservedSelectors.contains(selector.name) {
            throw .reservedSelector(.init(className: className, selector: selector.name, reason: "the runtime releases ivars itself; override dealloc instead"))
        }
    }

    // MARK: - Swift closures

    /// Builds a closure IMP from an untyped body, after checking declared `types` (if any)
    /// against what the Swift closure's types imply.
    @usableFromInline
    func closureIMP(_ selector: Selector, declared types: String?, returns: TypeEncoding,
                    arguments: [TypeEncoding], word: WordBody? = nil, direct: DirectIntBody? = nil,
                    body: @escaping ClosureBody) throws(RuntimeError) -> (IMP, Signature) {
        let implied = Signature.encoding(returning: returns, arguments: arguments)
        let sig: Signature
        if let types {
            sig = try Signature(types)
            let impliedSig = try Signature(implied)
            let same = sig.argumentTypes.count == impliedSig.argumentTypes.count
                && sig.returnType.isCompatible(with: impliedSig.returnType)
                && zip(sig.argumentTypes.dropFirst(2), impliedSig.argumentTypes.dropFirst(2)).allSatisfy { $0.isCompatible(with: $1) }
            guard same else {
                throw .signatureMismatch(.init(className: name, selector: selector.name, expected: sig.encoding, actual: impliedSig.encoding))
            }
        } else {
            sig = try Signature(implied)
        }
        // An `Int` body reads whole registers: only where the declared types are its own.
        var exact = direct != nil
        if exact, types != nil {
            let key = try Signature(implied).storage.raw.pointee.key
            exact = key != 0 && sig.storage.raw.pointee.key == key
        }
        let box = try ClosureIMP(signature: sig, owner: name, body: body, wordBody: word, direct: exact ? direct : nil)
        return (box.imp, sig)
    }

    /// Adds a method implemented by an untyped closure over libffi's argument vector.
    ///
    /// The closure gets the return storage and one pointer per argument (receiver and selector
    /// first); it must write a value of the return type. For typed closures use the overloads.
    /// An error it throws reaches the sender; the raw caller gets a zero return.
    @discardableResult
    public func addMethod(_ selector: Selector, types: String,
                          rawBody: @escaping @Sendable (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws -> Void) throws(RuntimeError) -> Method {
        let sig = try Signature(types)
        let box = try ClosureIMP(signature: sig, owner: name, body: rawBody)
        return try install(selector, box.imp, sig, replacing: false).method
    }

    /// Adds a class method (a method of the metaclass) implemented by a C function.
    @discardableResult
    public func addClassMethod(_ selector: Selector, implementation: IMP, types: String) throws(RuntimeError) -> Method {
        try metaclass.addMethod(selector, implementation: implementation, types: types)
    }
}
