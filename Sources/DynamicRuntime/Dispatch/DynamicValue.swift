import CDynamicRuntime

/// A value of any encodable type, for dynamic sends and invocations.
public enum DynamicValue: CustomStringConvertible, @unchecked Sendable {
    /// No value: what a `void` method returns.
    case void
    /// A `B` value.
    case bool(Bool)
    /// A `c` value.
    case int8(Int8)
    /// A `C` value.
    case uint8(UInt8)
    /// An `s` value.
    case int16(Int16)
    /// An `S` value.
    case uint16(UInt16)
    /// An `i` value.
    case int32(Int32)
    /// An `I` value.
    case uint32(UInt32)
    /// A `q` (or `l`) value.
    case int64(Int64)
    /// A `Q` (or `L`) value.
    case uint64(UInt64)
    /// An `f` value.
    case float(Float)
    /// A `d` value.
    case double(Double)
    #if arch(x86_64) || arch(i386)
    /// A `D` value.
    case longDouble(Float80)
    #endif
    /// A `*` value: a C string (one read out of a call owns a copy of its characters).
    case cString(CString)
    /// An object; a returned object is owned by this value.
    case object(Object?)
    /// A `#` value: a class.
    case classObject(ClassRef)
    /// A `:` value: a selector, or nil.
    case selector(Selector?)
    /// A `^` value: any pointer, or nil.
    case pointer(UnsafeRawPointer?)
    /// A struct's bytes, with its encoding.
    case structure(TypeEncoding, [UInt8])

    /// The value as an Int if it is an integer (or Bool) type.
    public var intValue: Int? {
        switch self {
        case let .bool(v): v ? 1 : 0
        case let .int8(v): Int(v)
        case let .uint8(v): Int(v)
        case let .int16(v): Int(v)
        case let .uint16(v): Int(v)
        case let .int32(v): Int(v)
        case let .uint32(v): Int(v)
        case let .int64(v): Int(v)
        case let .uint64(v): Int(truncatingIfNeeded: v)
        default: nil
        }
    }

    /// The value as a Double if it is a floating-point type.
    public var doubleValue: Double? {
        switch self {
        case let .float(v): Double(v)
        case let .double(v): v
        #if arch(x86_64) || arch(i386)
        case let .longDouble(v): Double(v)
        #endif
        default: nil
        }
    }

    /// The characters of a C string value (nil for other values and for NULL).
    public var stringValue: String? {
        if case let .cString(s) = self { return s.string }
        return nil
    }

    /// The object, if this is an object value.
    public var objectValue: Object? {
        if case let .object(o) = self { return o }
        return nil
    }

    /// The struct reinterpreted as `T` when the sizes agree.
    public func structValue<T: StructMessageValue>(as _: T.Type = T.self) -> T? {
        guard case let .structure(_, bytes) = self, bytes.count == MemoryLayout<T>.size else { return nil }
        return bytes.withUnsafeBytes { $0.loadUnaligned(as: T.self) }
    }

    /// A readable form, for logs and test failures.
    public var description: String {
        switch self {
        case .void: "void"
        case let .bool(v): "\(v)"
        case let .int8(v): "\(v)"
        case let .uint8(v): "\(v)"
        case let .int16(v): "\(v)"
        case let .uint16(v): "\(v)"
        case let .int32(v): "\(v)"
        case let .uint32(v): "\(v)"
        case let .int64(v): "\(v)"
        case let .uint64(v): "\(v)"
        case let .float(v): "\(v)"
        case let .double(v): "\(v)"
        #if arch(x86_64) || arch(i386)
        case let .longDouble(v): "\(v)L"
        #endif
        case let .cString(s): s.string.map { "\"\($0)\"" } ?? "NULL"
        case let .object(o): o?.description ?? "nil"
        case let .classObject(c): c.runtimeClass?.name ?? "Nil"
        case let .selector(s): s.map { "@selector(\($0.name))" } ?? "NULL"
        case let .pointer(p): p.map { "\($0)" } ?? "NULL"
        case let .structure(t, bytes): "\(t.encoding)(\(bytes.count) bytes)"
        }
    }

    /// The value a method returned in an integer register, by its type's key code (see
    /// `TypeEncoding.keyCode`; not a struct, a floating-point value or a C string). Objects
    /// are +1.
    static func fromReturnWord(_ w: UInt64, code: UInt64) -> DynamicValue {
        switch code {
        case TypeEncoding.void.keyCode: .void
        case TypeEncoding.int8.keyCode: .int8(Int8(word: w))
        case TypeEncoding.uint8.keyCode: .uint8(UInt8(word: w))
        case TypeEncoding.int16.keyCode: .int16(Int16(word: w))
        case TypeEncoding.uint16.keyCode: .uint16(UInt16(word: w))
        case TypeEncoding.int32.keyCode: .int32(Int32(word: w))
        case TypeEncoding.uint32.keyCode: .uint32(UInt32(word: w))
        case TypeEncoding.int64.keyCode: .int64(Int64(word: w))
        case TypeEncoding.uint64.keyCode: .uint64(w)
        case TypeEncoding.bool.keyCode: .bool(Bool(word: w))
        case TypeEncoding.object.keyCode: .object(Object?(word: w))
        case TypeEncoding.classObject.keyCode: .classObject(ClassRef(word: w))
        case TypeEncoding.selector.keyCode: .selector(sf_sel(bitPattern: UInt(w)).map(Selector.init(raw:)))
        case TypeEncoding.pointerKeyCode: .pointer(UnsafeRawPointer(bitPattern: UInt(w)))
        default: preconditionFailure("no register value for key code \(code)")
        }
    }

    /// The key code and register value of a value that travels in an integer register, for the
    /// register path of a dynamic send; nil for floating-point, pointer, struct and void values
    /// and a NULL selector, which the checked path takes.
    var registerArgument: (code: UInt64, word: UInt64)? {
        switch self {
        case let .bool(v): (TypeEncoding.bool.keyCode, v.word)
        case let .int8(v): (TypeEncoding.int8.keyCode, v.word)
        case let .uint8(v): (TypeEncoding.uint8.keyCode, v.word)
        case let .int16(v): (TypeEncoding.int16.keyCode, v.word)
        case let .uint16(v): (TypeEncoding.uint16.keyCode, v.word)
        case let .int32(v): (TypeEncoding.int32.keyCode, v.word)
        case let .uint32(v): (TypeEncoding.uint32.keyCode, v.word)
        case let .int64(v): (TypeEncoding.int64.keyCode, v.word)
        case let .uint64(v): (TypeEncoding.uint64.keyCode, v)
        case let .cString(c): (TypeEncoding.cString.keyCode, c.word)
        case let .object(o): (TypeEncoding.object.keyCode, o.word)
        case let .classObject(c): (TypeEncoding.classObject.keyCode, c.word)
        case let .selector(s?): (TypeEncoding.selector.keyCode, s.word)
        default: nil
        }
    }

    /// Reads a value of type `type` from storage. Returns take ownership of +1 objects;
    /// arguments are borrowed and retained here; C strings are copied.
    static func load(_ type: TypeEncoding, from p: UnsafeRawPointer, isReturn: Bool) -> DynamicValue {
        switch type {
        case .void: return .void
        case .bool: return .bool(p.load(as: UInt8.self) != 0)
        case .int8: return .int8(isReturn ? Int8(truncatingIfNeeded: p.load(as: Int64.self)) : p.load(as: Int8.self))
        case .uint8: return .uint8(p.load(as: UInt8.self))
        case .int16: return .int16(isReturn ? Int16(truncatingIfNeeded: p.load(as: Int64.self)) : p.load(as: Int16.self))
        case .uint16: return .uint16(p.load(as: UInt16.self))
        case .int32: return .int32(isReturn ? Int32(truncatingIfNeeded: p.load(as: Int64.self)) : p.load(as: Int32.self))
        case .uint32: return .uint32(p.load(as: UInt32.self))
        case .int64, .long: return .int64(p.load(as: Int64.self))
        case .uint64, .unsignedLong: return .uint64(p.load(as: UInt64.self))
        case .float: return .float(p.load(as: Float.self))
        case .double: return .double(p.load(as: Double.self))
        #if arch(x86_64) || arch(i386)
        case .longDouble: return .longDouble(p.loadUnaligned(as: Float80.self))
        #else
        case .longDouble: return .structure(.longDouble, Array(UnsafeRawBufferPointer(start: p, count: 16)))
        #endif
        case .cString: return .cString(CString(copying: p.load(as: UnsafePointer<CChar>?.self)))
        case .object, .block:
            let raw = p.load(as: sf_id?.self)
            return .object(raw.map { isReturn ? Object(adopting: $0) : Object(retaining: $0) })
        case .classObject: return .classObject(ClassRef(raw: p.load(as: sf_class_t?.self)))
        case .selector: return .selector(p.load(as: sf_sel?.self).map(Selector.init(raw:)))
        // An array argument arrives as a pointer to its first element.
        case .pointer, .array: return .pointer(p.load(as: UnsafeRawPointer?.self))
        case .structure:
            let size = (try? Signature("v@:" + type.encoding)).map { Int(sf_ffi_type_size($0.raw.pointee.arg_types[2]!)) } ?? 0
            return .structure(type, Array(UnsafeRawBufferPointer(start: p, count: size)))
        }
    }

    /// The encoding this value naturally has.
    public var typeEncoding: TypeEncoding {
        switch self {
        case .void: .void
        case .bool: .bool
        case .int8: .int8
        case .uint8: .uint8
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .float: .float
        case .double: .double
        #if arch(x86_64) || arch(i386)
        case .longDouble: .longDouble
        #endif
        case .cString: .cString
        case .object: .object
        case .classObject: .classObject
        case .selector: .selector
        case .pointer: .pointer(nil)
        case let .structure(t, _): t
        }
    }

    /// Writes the value as an argument (borrowed) or a return value (+1 for objects).
    func store(to p: UnsafeMutableRawPointer, isReturn: Bool) {
        switch self {
        case .void: break
        case let .bool(v): if isReturn { p.storeBytes(of: v ? 1 : 0, as: UInt64.self) } else { p.storeBytes(of: v ? 1 : 0, as: UInt8.self) }
        case let .int8(v): if isReturn { v.storeReturn(to: p) } else { v.storeArgument(to: p) }
        case let .uint8(v): if isReturn { v.storeReturn(to: p) } else { v.storeArgument(to: p) }
        case let .int16(v): if isReturn { v.storeReturn(to: p) } else { v.storeArgument(to: p) }
        case let .uint16(v): if isReturn { v.storeReturn(to: p) } else { v.storeArgument(to: p) }
        case let .int32(v): if isReturn { v.storeReturn(to: p) } else { v.storeArgument(to: p) }
        case let .uint32(v): if isReturn { v.storeReturn(to: p) } else { v.storeArgument(to: p) }
        case let .int64(v): p.storeBytes(of: v, as: Int64.self)
        case let .uint64(v): p.storeBytes(of: v, as: UInt64.self)
        case let .float(v): p.storeBytes(of: v, as: Float.self)
        case let .double(v): p.storeBytes(of: v, as: Double.self)
        #if arch(x86_64) || arch(i386)
        case let .longDouble(v): p.storeBytes(of: v, as: Float80.self)
        #endif
        case let .cString(s): s.storeArgument(to: p)
        case let .object(o): if isReturn { o.storeReturn(to: p) } else { o.storeArgument(to: p) }
        case let .classObject(c): c.storeArgument(to: p)
        case let .selector(s): p.storeBytes(of: s?.raw, as: sf_sel?.self)
        case let .pointer(ptr): p.storeBytes(of: ptr, as: UnsafeRawPointer?.self)
        case let .structure(_, bytes): bytes.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
    }
}

extension DynamicValue {
    /// Throws unless the value fills a `size`-byte slot of type `type` exactly. Only
    /// `.structure` carries a byte count of its own (the other cases have their type's size,
    /// which the type check already matched), and `store` copies all of it.
    func checkByteCount(size: Int, of type: TypeEncoding, what: String, className: String,
                        selector: String) throws(RuntimeError) {
        guard case let .structure(_, bytes) = self, bytes.count != size else { return }
        let kind = if case .structure = type { "struct " } else { "" }
        throw .invalidArgument(.init(className: className, selector: selector, operation: what, expected: "a \(size)-byte \(kind)'\(type.encoding)'", actual: "\(bytes.count) bytes"))
    }
}

extension DynamicValue: MessageArgument {
    /// A dynamic value has no static encoding; sends check its case's encoding instead.
    public static var typeEncoding: TypeEncoding { .pointer(nil) }
    /// Reads a value from argument storage.
    public init(argumentStorage: UnsafeRawPointer) { self = .pointer(argumentStorage.load(as: UnsafeRawPointer?.self)) }
    /// Writes the value to argument storage (borrowed for the call: no retain).
    public func storeArgument(to storage: UnsafeMutableRawPointer) { store(to: storage, isReturn: false) }
}
