import CDynamicRuntime

/// The two words of a Swift closure (function, context) kept as a class's one stored property,
/// read as `struct sf_swift_closure`: what the `Int` bodies' C thunks call. Swift does not
/// promise this layout; `IntBodyLayout` checks it once before any thunk relies on it.
enum ClosureWords {
    /// The words of `box`'s first stored property.
    static func of(_ box: AnyObject) -> UnsafeMutablePointer<sf_swift_closure> {
        _getUnsafePointerToStoredProperties(box).assumingMemoryBound(to: sf_swift_closure.self)
    }
}
