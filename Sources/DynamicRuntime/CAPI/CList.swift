import Glibc

/// The arrays the C API hands out (`sf_class_copyMethodList` and friends): one `malloc`'d
/// block per call, which the caller frees with `sf_free`, its entries first and the strings
/// they point to after them. nil when there is nothing to list or no memory.
enum CList {
    /// A copy of `items`; `count` (if given) is set to their number.
    static func copy<T>(_ items: [T], count: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<T>? {
        count?.pointee = UInt32(items.count)
        guard !items.isEmpty else { return nil }
        return withStrings(items.map { _ in [] }) { i, _ in items[i] }
    }

    /// One entry per element of `strings`, made by `entry` from the entry's index and the
    /// copied strings (in the order given), which live in the same block. Also for a single
    /// entry kept until its owner frees it.
    static func withStrings<T>(_ strings: [[String]],
                               _ entry: (Int, [UnsafePointer<CChar>]) -> T) -> UnsafeMutablePointer<T>? {
        let texts = strings.map { $0.map { Array($0.utf8CString) } }
        let head = MemoryLayout<T>.stride * texts.count
        let size = texts.reduce(head) { total, entry in entry.reduce(total) { $0 + $1.count } }
        guard size > 0, let block = malloc(size) else { return nil }
        let list = block.bindMemory(to: T.self, capacity: texts.count)
        var text = (block + head).bindMemory(to: CChar.self, capacity: size - head)
        for (i, entryTexts) in texts.enumerated() {
            let copied = entryTexts.map { t -> UnsafePointer<CChar> in
                text.initialize(from: t, count: t.count)
                defer { text += t.count }
                return UnsafePointer(text)
            }
            (list + i).initialize(to: entry(i, copied))
        }
        return list
    }
}
