import CDynamicRuntime
import Synchronization

/// An IMP and the owner keeping it alive, published as one immutable value.
final class IMPBox {
    let imp: IMP
    init(_ imp: IMP) { self.imp = imp }
}

/// An IMP that readers load without the lock (a method entry's, a hook's original): one
/// `IMPBox`, swapped atomically. A replaced box goes to the retired list, so a reader inside a
/// read section can still copy it; `deinit` drops the last one.
struct PublishedIMP: ~Copyable {
    private let box: PublishedObject<IMPBox>

    init(_ imp: IMP?) { box = PublishedObject(imp.map(IMPBox.init)) }

    /// The IMP with its owner (lock held, or in a read section); nil if none is published.
    var imp: IMP? { box.load()?.withObject { $0.imp } }

    /// The published box, retained, with its IMP (in a read section); nil if none is published.
    var retainedBox: IMPBox? { box.object }

    /// Whether `held` (a box the caller keeps alive) is the one published now: no read section,
    /// the published pointer is only compared. A kept box cannot be freed and its address reused.
    func isPublished(_ held: ObjectWord<IMPBox>) -> Bool { box.load() == held }

    /// Publishes `new` (lock held). `unpublish` then stops the C side handing out the old
    /// pointer; only after that is the old box retired. Returns the previous IMP.
    @discardableResult
    func exchange(_ new: IMP, unpublish: () -> Void) -> IMP? {
        let old = box.exchange(IMPBox(new))
        unpublish()
        guard let old else { return nil }
        let previous = old.withObject { $0.imp }
        Runtime.state.retire(releasing: old)
        return previous
    }

    /// Publishes `new` and releases the old box at once: only when no reader can hold it any
    /// more (after a grace period).
    func replaceUnreachable(with new: IMP) { box.exchange(IMPBox(new))?.release() }
}
