import CDynamicRuntime
import Glibc

/// An instance variable: a typed slot at a fixed offset in every instance of a class.
/// Object ivars are strong unless declared weak.
public struct Ivar: Hashable, Sendable {
    /// The variable's name, unique along the class chain.
    public let name: String
    /// Its type. Object-typed (`@`) ivars are strong: set retains, dealloc releases.
    public let type: TypeEncoding
    /// Byte offset from the start of the object.
    public let offset: Int
    /// Size in bytes.
    public let size: Int
    /// True for a zeroing weak object ivar (`addWeakIvar`): set stores weakly, reads retain a
    /// live object or give nil, and the slot reads nil once its object is deallocated.
    public internal(set) var isWeak = false
}
