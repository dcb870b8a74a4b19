import DynamicRuntime
import Glibc

/// The (object, selector) a rule is performing on this thread. A class rule's hook passes
/// such a call straight through, so an instance rule takes precedence over a class rule.
enum PerformingCall {
    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k, nil)
        return k
    }()

    struct Marker {
        let object: UnsafeMutableRawPointer?
        let selector: Selector
        let previous: UnsafeMutableRawPointer?
    }

    /// Whether `object`'s `selector` is being performed by a rule on this thread.
    static func isActive(_ object: ObjectRef, _ selector: Selector) -> Bool {
        guard let top = pthread_getspecific(key) else { return false }
        var m: UnsafeMutableRawPointer? = top
        while let p = m {
            let marker = p.assumingMemoryBound(to: Marker.self).pointee
            if marker.selector == selector, marker.object == object.raw.map(UnsafeMutableRawPointer.init) { return true }
            m = marker.previous
        }
        return false
    }

    /// Runs `body` marked as a rule's own performance of `object`'s `selector`.
    static func with<T>(_ object: ObjectRef, _ selector: Selector, _ body: () throws -> T) rethrows -> T {
        var marker = Marker(object: object.raw.map(UnsafeMutableRawPointer.init), selector: selector, previous: pthread_getspecific(key))
        return try withUnsafeMutablePointer(to: &marker) { p in
            pthread_setspecific(key, p)
            defer { pthread_setspecific(key, p.pointee.previous) }
            return try body()
        }
    }
}
