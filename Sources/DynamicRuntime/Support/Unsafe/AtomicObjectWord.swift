import Synchronization

/// An atomic `ObjectWord<T>`, or nothing: what the call path reads without the lock (a hook's
/// chain, a method entry's hook, an object's hook list). Whether the word it holds carries a
/// +1 is the holder's to say, as for `ObjectWord`; `PublishedObject` is the kind that does.
@usableFromInline
struct AtomicObjectWord<T: AnyObject>: ~Copyable {
    @usableFromInline let bits: Atomic<UInt>

    @inlinable
    init(_ word: ObjectWord<T>? = nil) { bits = Atomic(word?.bits ?? 0) }

    /// The word stored last, or nil.
    @inlinable @inline(__always)
    func load() -> ObjectWord<T>? { ObjectWord(bits: bits.load(ordering: .acquiring)) }

    /// The word stored last, which the caller knows has been stored.
    @inlinable @inline(__always)
    func loadNonNil() -> ObjectWord<T> { ObjectWord(nonZeroBits: bits.load(ordering: .acquiring)) }

    @inlinable @inline(__always)
    var isNil: Bool { bits.load(ordering: .acquiring) == 0 }

    @inlinable @inline(__always)
    func store(_ word: ObjectWord<T>?) { bits.store(word?.bits ?? 0, ordering: .releasing) }

    /// Stores `word` and returns the word it replaced.
    @inlinable @inline(__always)
    func exchange(_ word: ObjectWord<T>?) -> ObjectWord<T>? {
        ObjectWord(bits: bits.exchange(word?.bits ?? 0, ordering: .acquiringAndReleasing))
    }
}

/// A `T` published for readers without the lock: an atomic word that carries a +1 of its own,
/// replaced whole. A reader loads it unretained inside a read section; the writer (lock held)
/// retires the one it replaced, which stays alive until no reader can hold it.
struct PublishedObject<T: AnyObject>: ~Copyable {
    let word: AtomicObjectWord<T>

    init(_ object: T? = nil) { word = AtomicObjectWord(object.map { ObjectWord(retaining: $0) }) }

    deinit { word.exchange(nil)?.release() }

    /// The published object, unretained (in a read section, or lock held).
    @inline(__always)
    func load() -> ObjectWord<T>? { word.load() }

    /// The published object, which the caller knows is there, unretained.
    @inline(__always)
    func loadNonNil() -> ObjectWord<T> { word.loadNonNil() }

    /// The published object, as a strong reference of the caller's.
    var object: T? { word.load()?.object }

    var isNil: Bool { word.isNil }

    /// Publishes `new` and hands back the replaced word with its +1: the caller retires it
    /// (`RuntimeState.retire(releasing:)`), or releases it when no reader can hold it.
    func exchange(_ new: T?) -> ObjectWord<T>? { word.exchange(new.map { ObjectWord(retaining: $0) }) }

    /// Publishes `new` and retires the replaced object (lock held).
    func publish(_ new: T?) {
        if let old = exchange(new) { Runtime.state.retire(releasing: old) }
    }
}
