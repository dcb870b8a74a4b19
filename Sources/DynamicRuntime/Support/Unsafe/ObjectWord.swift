/// A reference to a `T` kept as one machine word, with no reference count of its own: the form
/// in which an object is handed to C (a context pointer, a word of `sf_method`) or kept in an
/// atomic. The word does not say whether it carries a +1; the code that makes it does
/// (`init(retaining:)`, and `take()` or `release()` once), and every other use of it is
/// unretained and valid only while something else keeps the object alive (a read section, the
/// runtime lock, an owner). Every conversion between objects and words in the runtime goes
/// through here.
@usableFromInline
package struct ObjectWord<T: AnyObject> {
    @usableFromInline package let reference: Unmanaged<T>

    @inlinable @inline(__always)
    package init(_ reference: Unmanaged<T>) { self.reference = reference }

    /// The object, without a retain.
    @inlinable @inline(__always)
    package init(unretained object: T) { reference = .passUnretained(object) }

    /// The object with a +1 the word now carries.
    @inlinable @inline(__always)
    package init(retaining object: T) { reference = .passRetained(object) }

    @inlinable @inline(__always)
    package init(_ pointer: UnsafeRawPointer) { reference = .fromOpaque(pointer) }

    /// The word whose bits are `bits`, or nil for 0.
    @inlinable @inline(__always)
    package init?(bits: UInt) {
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        reference = .fromOpaque(pointer)
    }

    /// The word whose bits are `bits`, which the caller knows are not 0.
    @inlinable @inline(__always)
    package init(nonZeroBits bits: UInt) { reference = .fromOpaque(UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped) }

    @inlinable @inline(__always)
    package var pointer: UnsafeMutableRawPointer { reference.toOpaque() }

    @inlinable @inline(__always)
    package var bits: UInt { UInt(bitPattern: reference.toOpaque()) }

    /// The object as a strong reference of the caller's (the word's count is untouched).
    @inlinable @inline(__always)
    package var object: T { reference.takeUnretainedValue() }

    /// Runs `body` with the object, neither retained nor released around it: the caller keeps
    /// the object alive for the call.
    @inlinable @inline(__always)
    package func withObject<R, E: Error>(_ body: (T) throws(E) -> R) throws(E) -> R {
        // `_withUnsafeGuaranteedRef` rethrows untyped: the cast runs only when the body threw.
        do {
            return try reference._withUnsafeGuaranteedRef { try body($0) }
        } catch {
            throw error as! E
        }
    }

    /// Adds a +1 and returns the word that carries it.
    @inlinable @inline(__always)
    package func retain() -> ObjectWord { ObjectWord(reference.retain()) }

    /// Gives up the +1 the word carries.
    @inlinable @inline(__always)
    package func release() { reference.release() }

    /// The object with the +1 the word carried, which the caller now owns.
    @inlinable @inline(__always)
    package func take() -> T { reference.takeRetainedValue() }
}

extension ObjectWord: Equatable {
    @inlinable @inline(__always)
    package static func == (a: ObjectWord, b: ObjectWord) -> Bool { a.pointer == b.pointer }
}
