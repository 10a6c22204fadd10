//! The calibration fit of estimated token counts against recorded usage.

/// The fit of estimated token growth against recorded growth.
///
/// `factor` maps estimates onto the provider's counts
/// (`recorded ≈ factor × estimated`); `relative_error` is the root mean
/// square of the per-pair relative error `(factor·e − r) / r` after the fit;
/// `n` is the number of pairs used. With `n == 0` nothing was fitted:
/// `factor` is 1 and `relative_error` 0.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TokenCalibration {
    /// Multiply estimated tokens by this to approximate recorded tokens.
    pub factor: f64,
    /// RMS relative error of the fitted estimate over the pairs used.
    pub relative_error: f64,
    /// Pairs used in the fit.
    pub n: usize,
}

impl Default for TokenCalibration {
    fn default() -> Self {
        Self {
            factor: 1.0,
            relative_error: 0.0,
            n: 0,
        }
    }
}

impl TokenCalibration {
    /// `tokens × factor`, rounded to the nearest integer.
    pub fn apply(&self, tokens: u64) -> u64 {
        (tokens as f64 * self.factor).round().max(0.0) as u64
    }
}

/// Fits `recorded ≈ factor × estimated` by least squares through the origin
/// over `(estimated_growth, recorded_growth)` pairs, e.g. the growth of the
/// prompt between consecutive calls as this crate estimates it and as the
/// provider recorded it.
///
/// Pairs where either side is zero or negative (compaction, a cleared
/// context, a missing record) carry no information about the ratio and are
/// skipped.
pub fn calibrate(pairs: &[(i64, i64)]) -> TokenCalibration {
    let used: Vec<(f64, f64)> = pairs
        .iter()
        .filter(|(e, r)| *e > 0 && *r > 0)
        .map(|&(e, r)| (e as f64, r as f64))
        .collect();
    if used.is_empty() {
        return TokenCalibration::default();
    }
    let sxy: f64 = used.iter().map(|(e, r)| e * r).sum();
    let sxx: f64 = used.iter().map(|(e, _)| e * e).sum();
    let factor = sxy / sxx;
    let mse: f64 = used
        .iter()
        .map(|(e, r)| {
            let rel = (factor * e - r) / r;
            rel * rel
        })
        .sum::<f64>()
        / used.len() as f64;
    TokenCalibration {
        factor,
        relative_error: mse.sqrt(),
        n: used.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_fits_synthetic_ratio() {
        let pairs: Vec<(i64, i64)> = (1..=50).map(|i| (i * 100, i * 120)).collect();
        let c = calibrate(&pairs);
        assert_eq!(c.n, 50);
        assert!((c.factor - 1.2).abs() < 1e-12);
        assert!(c.relative_error < 1e-12);
        assert_eq!(c.apply(1000), 1200);
    }

    #[test]
    fn calibration_skips_zero_and_negative_pairs() {
        let pairs = [
            (100, 110),
            (200, 220),
            (0, 50),
            (50, 0),
            (-300, 10),
            (100, -5),
        ];
        let c = calibrate(&pairs);
        assert_eq!(c.n, 2);
        assert!((c.factor - 1.1).abs() < 1e-12);
        assert_eq!(calibrate(&[]), TokenCalibration::default());
        assert_eq!(calibrate(&[(0, 0)]).n, 0);
    }

    #[test]
    fn calibration_reports_noise() {
        // Alternating +10% / -10% around a 1.5 ratio.
        let pairs: Vec<(i64, i64)> = (0..100)
            .map(|i| {
                let r = if i % 2 == 0 { 1650 } else { 1350 };
                (1000, r)
            })
            .collect();
        let c = calibrate(&pairs);
        assert!((c.factor - 1.5).abs() < 1e-9);
        assert!(c.relative_error > 0.09 && c.relative_error < 0.12, "{c:?}");
    }
}
