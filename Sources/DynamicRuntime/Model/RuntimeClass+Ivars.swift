import CDynamicRuntime
import Glibc

extension RuntimeClass {
    /// Adds an instance variable. Only before `register()`; names are unique along the chain.
    ///
    /// `alignment` (a power of two, in bytes) raises the type's natural alignment, as
    /// `class_addIvar`'s `log2_alignment` does; instances are then allocated that aligned too.
    @discardableResult
    public func addIvar(_ name: String, type: TypeEncoding, alignment: Int? = nil) throws(RuntimeError) -> Ivar {
        try addIvar(name, type: type, alignment: alignment, weak: false)
    }

    /// Adds a zeroing weak object ivar (`__weak id`), which reads nil once its object is
    /// deallocated. Only before `register()`. Set and read it with `setValue(_:forIvar:)` and
    /// `value(ofIvar:)` (read it as `Object?` to hold what it refers to), or from C with
    /// `sf_storeWeak` / `sf_loadWeakRetained` on `sf_object_getIvarPointer`.
    @discardableResult
    public func addWeakIvar(_ name: String) throws(RuntimeError) -> Ivar {
        try addIvar(name, type: .object, alignment: nil, weak: true)
    }

    func addIvar(_ name: String, type: TypeEncoding, alignment: Int?, weak: Bool) throws(RuntimeError) -> Ivar {
        if case .void = type {
            throw .invalidArgument(.init(className: self.name, ivar: name, expected: "a type with a size", actual: "void"))
        }
        let (size, natural) = try SignatureTable.shared.layout(of: type)
        if size > RuntimeClass.maximumInstanceSize {
            throw .invalidArgument(.init(className: self.name, ivar: name, expected: "an ivar of at most \(RuntimeClass.maximumInstanceSize) bytes", actual: "\(size) bytes"))
        }
        if let alignment, alignment <= 0 || alignment & (alignment - 1) != 0 || alignment > RuntimeClass.maximumIvarAlignment {
            throw .invalidArgument(.init(className: self.name, ivar: name, expected: "an alignment that is a power of two up to \(RuntimeClass.maximumIvarAlignment)", actual: "\(alignment)"))
        }
        let align = max(natural, alignment ?? 1)
        return try Runtime.state.lock.withLock { () throws(RuntimeError) -> Ivar in
            guard !isRegistered else { throw .classAlreadyRegistered(.init(className: self.name, operation: "add ivar '\(name)'")) }
            guard !isMetaclass else { throw .invalidArgument(.init(className: self.name, ivar: name, operation: "add an ivar", expected: "a class", actual: "a metaclass")) }
            if ivarNamed(name) != nil {
                throw .invalidArgument(.init(className: self.name, ivar: name, expected: "a name no ivar in the class chain has", actual: "a name in use"))
            }
            let start = Int(sf_class_getInstanceSize(raw))
            let offset = (start + align - 1) / align * align
            guard offset + size <= RuntimeClass.maximumInstanceSize else {
                throw .invalidArgument(.init(className: self.name, ivar: name, expected: "instances of at most \(RuntimeClass.maximumInstanceSize) bytes", actual: "\(offset + size) bytes"))
            }
            let ivar = Ivar(name: name, type: type.interned, offset: offset, size: size, isWeak: weak)
            ivarList.append(ivar)
            sf_class_set_instance_size(raw, offset + size)
            instanceAlignment = max(instanceAlignment, align)
            if weak {
                weakIvarOffsets.append(offset)
            } else {
                objectIvarOffsets += type.strongObjectOffsets.map { offset + $0 }
            }
            return ivar
        }
    }

    /// The ivar with that name, searching superclasses too.
    public func ivar(named name: String) -> Ivar? {
        Runtime.state.lock.withLock { ivarNamed(name) }
    }

    private func ivarNamed(_ name: String) -> Ivar? {
        var c: RuntimeClass? = self
        while let k = c {
            if let v = k.ivarList.first(where: { $0.name == name }) { return v }
            c = k.superclass
        }
        return nil
    }

    /// The largest alignment an ivar may ask for (one page).
    public static let maximumIvarAlignment = 4096

    /// The largest instance: ivars of any size are laid out up to it, so that no size
    /// arithmetic can overflow.
    static let maximumInstanceSize = 1 << 30

    /// This class's own ivars, in declaration order.
    public var ivars: [Ivar] { Runtime.state.lock.withLock { ivarList } }
}
