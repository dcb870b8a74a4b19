import CDynamicRuntime

/// A class's own methods by selector: open addressing over one word per bucket (the record,
/// which knows its selector), filled up to 7/8. A dictionary of selector and record costs two
/// words per bucket at up to 3/4, about 40 bytes a method at 200 methods; this costs 10–20.
/// Guarded by the runtime lock, as `RuntimeClass.methods` is.
struct MethodTable: ExpressibleByDictionaryLiteral {
    private var buckets: [MethodRecord?] = []
    private(set) var count = 0

    init(dictionaryLiteral elements: (Selector, MethodRecord)...) {
        for (s, r) in elements { self[s] = r }
    }

    private static func hash(_ s: Selector) -> Int { Int(s.raw.pointee.hash) }

    private func slot(of s: Selector) -> Int? {
        guard !buckets.isEmpty else { return nil }
        let mask = buckets.count - 1
        var i = Self.hash(s) & mask
        while let r = buckets[i] {
            if sf_method_sel(r.raw) == s.raw { return i }
            i = (i + 1) & mask
        }
        return nil
    }

    subscript(_ s: Selector) -> MethodRecord? {
        get { slot(of: s).flatMap { buckets[$0] } }
        set {
            if let i = slot(of: s) {
                if let newValue { buckets[i] = newValue } else { remove(at: i) }
                return
            }
            guard let newValue else { return }
            if (count + 1) * 8 > buckets.count * 7 { grow() }
            insert(newValue)
            count += 1
        }
    }

    /// Every record, in no particular order.
    var values: [MethodRecord] { buckets.compactMap { $0 } }

    var isEmpty: Bool { count == 0 }

    private mutating func insert(_ r: MethodRecord) {
        let mask = buckets.count - 1
        var i = Self.hash(Selector(raw: sf_method_sel(r.raw))) & mask
        while buckets[i] != nil { i = (i + 1) & mask }
        buckets[i] = r
    }

    private mutating func grow() {
        let old = buckets
        buckets = [MethodRecord?](repeating: nil, count: max(8, old.count * 2))
        for case let r? in old { insert(r) }
    }

    /// Backward-shift deletion: no tombstones, so probes stay short.
    private mutating func remove(at index: Int) {
        let mask = buckets.count - 1
        var hole = index
        var i = (index + 1) & mask
        buckets[hole] = nil
        while let r = buckets[i] {
            let home = Self.hash(Selector(raw: sf_method_sel(r.raw))) & mask
            // Move r into the hole when its home is not in (hole, i] (cyclically).
            let between = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i)
            if !between {
                buckets[hole] = r
                buckets[i] = nil
                hole = i
            }
            i = (i + 1) & mask
        }
        count -= 1
    }
}
