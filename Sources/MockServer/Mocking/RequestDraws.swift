import Mappings
import Synchronization

/// The random draws one request a stub answers makes, taken at once from the responder's generator in the
/// one order the `--seed` contract promises: with the same seed, fixtures and requests (in the same order),
/// every added delay, fault's random bytes, journal id and template value is the same.
///
/// The order: the added delay's sample (as many draws as its distribution takes; none without one), the
/// content seed (a plan's random choices, a fault's bytes), the journal id's two words (also the template's
/// `request.id`), then the template seed (`randomValue` and the other random helpers) when the answer is
/// templated.
struct RequestDraws {
  /// The added delay in milliseconds, as sampled (``MockResponder/delayMilliseconds(_:)`` clamps it).
  var delayMilliseconds: Double
  var contentSeed: UInt64
  var idWords: (UInt64, UInt64)
  /// Zero when the answer is not templated (nothing was drawn for it).
  var templateSeed: UInt64

  /// Draws for one request.
  /// - Parameters:
  ///   - random: the responder's generator (seeded by `--seed`).
  ///   - templated: the answer is rendered (a template seed is drawn).
  ///   - delay: samples the added delay from the uniform draws it is given (none for no delay).
  static func draw(
    from random: borrowing Mutex<SplitMix64>, templated: Bool,
    delay: (_ uniform: () -> Double) -> Double = { _ in 0 }
  ) -> RequestDraws {
    random.withLock { rng in
      let sampled = delay { rng.nextDouble() }
      let content = rng.next()
      let id = (rng.next(), rng.next())
      return RequestDraws(
        delayMilliseconds: sampled, contentSeed: content, idWords: id,
        templateSeed: templated ? rng.next() : 0)
    }
  }

  /// The journal entry's id and the template's `request.id`.
  var requestID: String { SplitMix64.uuidString(idWords.0, idWords.1) }
}
