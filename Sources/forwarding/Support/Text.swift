extension String {
    /// Without leading and trailing spaces.
    func trimmed() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }

    /// Pads with spaces to `width` characters, on the right (or on the left, `right: true`).
    func padded(_ width: Int, right: Bool = false) -> String {
        guard count < width else { return self }
        let fill = String(repeating: " ", count: width - count)
        return right ? fill + self : self + fill
    }
}

/// Formats with a fixed number of decimals, without Foundation.
func fmt(_ value: Double, _ decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var s = String(Int(rounded))
    if decimals > 0 {
        let frac = Int(((abs(rounded) - Double(Int(abs(rounded)))) * scale).rounded())
        let digits = String(frac)
        s += "." + String(repeating: "0", count: decimals - digits.count) + digits
        if rounded < 0, Int(rounded) == 0 { s = "-" + s }
    }
    return s
}

/// About three significant digits: 0.123, 1.23, 12.3, 123, 1235.
func fmtSignificant(_ value: Double) -> String {
    let magnitude = abs(value)
    return fmt(value, magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3)
}

/// A limit as it was set: one decimal (3.0), or two when it has them (1.15).
func fmtLimit(_ value: Double) -> String {
    fmt(value, (value * 10).rounded() == value * 10 ? 1 : 2)
}
