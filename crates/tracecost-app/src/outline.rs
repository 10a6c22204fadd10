//! What a plan keeps of each trace for the whole run: its names, what it
//! was sent to, and what the plan reads of its calls ([`TraceHead`],
//! whether they carried cache markers), without its messages, prompts or
//! calls. A fleet's traces wait on disk while it is replayed; their
//! outlines are all that stays in memory of them, so an outline is small:
//! the strings traces share (their file, account, project, model, status
//! quo) are held once ([`SharedStrings`]).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::AppError;

use tracecost_engine::cache::ProviderKind;
use tracecost_trace::{Trace, TraceFacts};

/// What a streamed report reads of a trace's calls before it reads the
/// trace back: how many, when the first started, whether all have a start
/// time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceHead {
    /// Calls.
    pub calls: usize,
    /// When the first call started.
    pub first_start_ms: Option<u64>,
    /// Whether every call has a start time ([`Trace::has_timestamps`]).
    pub timestamps: bool,
    /// The earliest and the latest start of its calls, when every call
    /// has one: where a fleet's account can be cut ([`crate::segments`]).
    pub span_ms: Option<(u64, u64)>,
}

impl TraceHead {
    /// `trace`'s head.
    pub fn of(trace: &Trace) -> Self {
        TraceHead {
            calls: trace.calls.len(),
            first_start_ms: trace.calls.first().and_then(|c| c.start_ms),
            timestamps: trace.has_timestamps(),
            span_ms: trace.has_timestamps().then(|| {
                trace
                    .calls
                    .iter()
                    .filter_map(|c| c.start_ms)
                    .fold((u64::MAX, 0), |(lo, hi), s| (lo.min(s), hi.max(s)))
            }),
        }
    }
}

/// A trace without its content: what choosing, checking and naming its
/// configs read ([`TraceFacts`]), and its [`TraceHead`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceOutline {
    /// [`Trace::name`] (the plan may have told traces of one name apart).
    pub name: String,
    /// [`Trace::session`] (likewise).
    pub session: Option<String>,
    /// Its file, account, project, model and status quo: one set of them
    /// held once for every trace that names the same (a fleet's traces
    /// name a few between them), 8 bytes a trace where five strings'
    /// handles took 80.
    pub shared: Arc<OutlineShared>,
    /// [`Trace::provider`].
    pub provider: ProviderKind,
    /// [`Trace::has_markers`].
    pub markers: bool,
    /// What a replay reads of its calls before it reads the trace.
    pub head: TraceHead,
}

/// The strings of a [`TraceOutline`] that traces share.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct OutlineShared {
    /// [`Trace::source`].
    pub source: Option<Arc<str>>,
    /// [`Trace::account`].
    pub account: Option<Arc<str>>,
    /// [`Trace::project`].
    pub project: Option<Arc<str>>,
    /// [`Trace::model`].
    pub model: Arc<str>,
    /// [`Trace::status_quo`].
    pub status_quo: Option<Arc<str>>,
}

impl TraceOutline {
    /// `trace`'s outline, its shared strings taken from `shared`.
    pub fn of(trace: &Trace, shared: &mut SharedStrings) -> Self {
        TraceOutline {
            name: trace.name.clone(),
            session: trace.session.clone(),
            shared: shared.outline(
                trace.source.as_deref(),
                trace.account.as_deref(),
                trace.project.as_deref(),
                &trace.model,
                trace.status_quo.as_deref(),
            ),
            provider: trace.provider,
            markers: trace.has_markers(),
            head: TraceHead::of(trace),
        }
    }

    /// Gives `trace` (this outline's, read back whole) the names the plan
    /// gave this outline.
    pub fn give_names(&self, trace: &mut Trace) {
        trace.name.clone_from(&self.name);
        trace.session.clone_from(&self.session);
        trace.source = self.shared.source.as_deref().map(str::to_owned);
    }
}

impl TraceFacts for TraceOutline {
    fn name(&self) -> &str {
        &self.name
    }
    fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }
    fn source(&self) -> Option<&str> {
        self.shared.source.as_deref()
    }
    fn account(&self) -> Option<&str> {
        self.shared.account.as_deref()
    }
    fn provider(&self) -> ProviderKind {
        self.provider
    }
    fn model(&self) -> &str {
        &self.shared.model
    }
    fn status_quo(&self) -> Option<&str> {
        self.shared.status_quo.as_deref()
    }
    fn has_markers(&self) -> bool {
        self.markers
    }
}

/// An outline as a cache keeps it ([`crate::fleet_cache`]): without its
/// file, which is where the trace is read now, and with its strings its
/// own.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OutlineRecord {
    name: String,
    session: Option<String>,
    account: Option<String>,
    project: Option<String>,
    provider: String,
    model: String,
    status_quo: Option<String>,
    markers: bool,
    calls: usize,
    first_start_ms: Option<u64>,
    timestamps: bool,
    span_ms: Option<(u64, u64)>,
}

impl OutlineRecord {
    /// `o`'s record.
    pub fn of(o: &TraceOutline) -> Self {
        let own = |s: &Option<Arc<str>>| s.as_deref().map(str::to_owned);
        OutlineRecord {
            name: o.name.clone(),
            session: o.session.clone(),
            account: own(&o.shared.account),
            project: own(&o.shared.project),
            provider: o.provider.to_string(),
            model: o.shared.model.to_string(),
            status_quo: own(&o.shared.status_quo),
            markers: o.markers,
            calls: o.head.calls,
            first_start_ms: o.head.first_start_ms,
            timestamps: o.head.timestamps,
            span_ms: o.head.span_ms,
        }
    }

    /// Whether [`Self::outline`] gives an outline (its provider is one this
    /// build knows).
    pub fn is_readable(&self) -> bool {
        self.provider.parse::<ProviderKind>().is_ok()
    }

    /// The outline again, read from `source`, its shared strings taken
    /// from `shared`; `None` when its provider is not one this build knows.
    pub fn outline(&self, source: &str, shared: &mut SharedStrings) -> Option<TraceOutline> {
        Some(TraceOutline {
            name: self.name.clone(),
            session: self.session.clone(),
            shared: shared.outline(
                Some(source),
                self.account.as_deref(),
                self.project.as_deref(),
                &self.model,
                self.status_quo.as_deref(),
            ),
            provider: self.provider.parse().ok()?,
            markers: self.markers,
            head: TraceHead {
                calls: self.calls,
                first_start_ms: self.first_start_ms,
                timestamps: self.timestamps,
                span_ms: self.span_ms,
            },
        })
    }
}

/// Every trace's outline, in the plan's order. A fleet's (its traces
/// stored) wait in a temporary file as their traces do, read back one at a
/// time; only each one's head stays in memory, packed, since a replay
/// orders and cuts a fleet by them. The outlines of 40,000 traces, with
/// their names, held 7 MB for the whole run; their heads hold 1.3 MB.
#[derive(Debug)]
pub struct Outlines(Kept);

#[derive(Debug)]
enum Kept {
    Memory(Vec<TraceOutline>),
    Spilled {
        /// The outlines, by place (where each is, on disk too).
        file: crate::spill::SpillFile,
        heads: Vec<PackedHead>,
        /// The shared strings the outlines name, by their place.
        shared: Vec<Arc<OutlineShared>>,
    },
}

/// An outline as [`Outlines`] spills it: without its head, its shared
/// strings by their place.
#[derive(serde::Serialize, serde::Deserialize)]
struct Spilled {
    name: String,
    session: Option<String>,
    shared: u32,
    provider: String,
    markers: bool,
}

/// A [`TraceHead`] in 32 bytes (its own takes 56): the calls and three
/// flags in one word (a trace holds far fewer than 2^61 calls), then the
/// first start and the span.
#[derive(Debug, Clone, Copy)]
struct PackedHead([u64; 4]);

impl PackedHead {
    const FIRST: u64 = 1 << 63;
    const TIMESTAMPS: u64 = 1 << 62;
    const SPAN: u64 = 1 << 61;

    fn of(h: &TraceHead) -> Option<Self> {
        let calls = u64::try_from(h.calls).ok().filter(|c| *c < Self::SPAN)?;
        let mut word = calls;
        for (on, bit) in [
            (h.first_start_ms.is_some(), Self::FIRST),
            (h.timestamps, Self::TIMESTAMPS),
            (h.span_ms.is_some(), Self::SPAN),
        ] {
            if on {
                word |= bit;
            }
        }
        let (lo, hi) = h.span_ms.unwrap_or_default();
        Some(PackedHead([word, h.first_start_ms.unwrap_or(0), lo, hi]))
    }

    fn head(self) -> TraceHead {
        let [word, first, lo, hi] = self.0;
        let has = |bit: u64| word & bit != 0;
        TraceHead {
            calls: (word & (Self::SPAN - 1)) as usize,
            first_start_ms: has(Self::FIRST).then_some(first),
            timestamps: has(Self::TIMESTAMPS),
            span_ms: has(Self::SPAN).then_some((lo, hi)),
        }
    }
}

impl Outlines {
    /// `outlines`, held in memory.
    pub fn in_memory(outlines: Vec<TraceOutline>) -> Self {
        Outlines(Kept::Memory(outlines))
    }

    /// `outlines`, written to a temporary file (in the system's temporary
    /// folder, as [`crate::store::TraceStore::new`]) but for their heads.
    pub fn spilled(outlines: Vec<TraceOutline>) -> Result<Self, AppError> {
        let mut file = crate::spill::SpillFile::new("outlines", outlines.len())?;
        let mut heads = Vec::with_capacity(outlines.len());
        let mut shared: Vec<Arc<OutlineShared>> = Vec::new();
        let mut place: HashMap<*const OutlineShared, u32> = HashMap::new();
        for (i, o) in outlines.into_iter().enumerate() {
            let at = match place.get(&Arc::as_ptr(&o.shared)) {
                Some(at) => *at,
                None => {
                    let at = u32::try_from(shared.len()).map_err(|_| {
                        AppError::Internal("over 4 billion sets of shared strings".into())
                    })?;
                    place.insert(Arc::as_ptr(&o.shared), at);
                    shared.push(o.shared.clone());
                    at
                }
            };
            heads.push(PackedHead::of(&o.head).ok_or_else(|| {
                AppError::Internal(format!("trace {} has {} calls", i + 1, o.head.calls))
            })?);
            let record = Spilled {
                name: o.name,
                session: o.session,
                shared: at,
                provider: o.provider.to_string(),
                markers: o.markers,
            };
            file.put(i, &crate::spill::encode_record(&record, "an outline")?)?;
        }
        file.seal()?;
        Ok(Outlines(Kept::Spilled {
            file,
            heads,
            shared,
        }))
    }

    /// How many traces.
    pub fn len(&self) -> usize {
        match &self.0 {
            Kept::Memory(v) => v.len(),
            Kept::Spilled { heads, .. } => heads.len(),
        }
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Trace `i`'s head (`i` must be one of the plan's places).
    pub fn head(&self, i: usize) -> TraceHead {
        match &self.0 {
            Kept::Memory(v) => v[i].head,
            Kept::Spilled { heads, .. } => heads[i].head(),
        }
    }

    /// Trace `i`'s outline: the plan's own, or read back.
    pub fn get(&self, i: usize) -> Result<Cow<'_, TraceOutline>, AppError> {
        let missing = || AppError::Usage(format!("no trace {} of {}", i + 1, self.len()));
        match &self.0 {
            Kept::Memory(v) => v.get(i).map(Cow::Borrowed).ok_or_else(missing),
            Kept::Spilled {
                file,
                heads,
                shared,
            } => {
                let head = heads.get(i).ok_or_else(missing)?.head();
                let bad = |why: String| {
                    AppError::Internal(format!(
                        "the outline of trace {} reads back as: {why}",
                        i + 1
                    ))
                };
                let r: Spilled =
                    crate::spill::decode_record(&file.get(i)?).map_err(|e| bad(e.to_string()))?;
                Ok(Cow::Owned(TraceOutline {
                    name: r.name,
                    session: r.session,
                    shared: shared
                        .get(r.shared as usize)
                        .cloned()
                        .ok_or_else(|| bad(format!("shared strings {}", r.shared)))?,
                    provider: r.provider.parse().map_err(|_| bad(r.provider))?,
                    markers: r.markers,
                    head,
                }))
            }
        }
    }

    /// Every outline, in order (each read back, when spilled).
    pub fn iter(&self) -> impl Iterator<Item = Result<Cow<'_, TraceOutline>, AppError>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The outlines, when held in memory.
    pub fn as_slice(&self) -> Option<&[TraceOutline]> {
        match &self.0 {
            Kept::Memory(v) => Some(v),
            Kept::Spilled { .. } => None,
        }
    }
}

/// Strings many traces share, each held once, and the sets of them
/// outlines name, each held once: a fleet's traces name a few files,
/// accounts, projects, models and status quos between them.
#[derive(Debug, Default)]
pub struct SharedStrings {
    strings: HashSet<Arc<str>>,
    outlines: HashSet<Arc<OutlineShared>>,
}

impl SharedStrings {
    /// `s`, shared with every other string equal to it got here.
    pub fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(held) = self.strings.get(s) {
            return held.clone();
        }
        let held: Arc<str> = Arc::from(s);
        self.strings.insert(held.clone());
        held
    }

    /// An outline's shared strings, held once for every outline that names
    /// the same.
    pub fn outline(
        &mut self,
        source: Option<&str>,
        account: Option<&str>,
        project: Option<&str>,
        model: &str,
        status_quo: Option<&str>,
    ) -> Arc<OutlineShared> {
        let set = OutlineShared {
            source: source.map(|s| self.get(s)),
            account: account.map(|s| self.get(s)),
            project: project.map(|s| self.get(s)),
            model: self.get(model),
            status_quo: status_quo.map(|s| self.get(s)),
        };
        if let Some(held) = self.outlines.get(&set) {
            return held.clone();
        }
        let held = Arc::new(set);
        self.outlines.insert(held.clone());
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outline_tells_what_its_trace_tells_and_shares_its_strings() {
        let mut shared = SharedStrings::default();
        let mut a = tracecost_gen::session(6, 1);
        a.source = Some("in/fleet.jsonl".into());
        a.account = Some("team".into());
        a.session = Some("s".into());
        let mut b = tracecost_gen::session(4, 2);
        b.source = a.source.clone();
        b.account = a.account.clone();
        for t in [&a, &b] {
            let o = TraceOutline::of(t, &mut shared);
            assert_eq!(TraceFacts::name(&o), TraceFacts::name(t));
            assert_eq!(TraceFacts::session(&o), TraceFacts::session(t));
            assert_eq!(TraceFacts::source(&o), TraceFacts::source(t));
            assert_eq!(TraceFacts::account(&o), TraceFacts::account(t));
            assert_eq!(TraceFacts::provider(&o), TraceFacts::provider(t));
            assert_eq!(TraceFacts::model(&o), TraceFacts::model(t));
            assert_eq!(TraceFacts::status_quo(&o), TraceFacts::status_quo(t));
            assert_eq!(o.markers, t.has_markers());
            assert_eq!(o.head, TraceHead::of(t));
            assert_eq!(o.shared.project.as_deref(), t.project.as_deref());
        }
        // The second trace's file and account are the first's, held once;
        // so is the whole set where every string is the same.
        let (oa, ob) = (
            TraceOutline::of(&a, &mut shared),
            TraceOutline::of(&b, &mut shared),
        );
        assert!(Arc::ptr_eq(
            oa.shared.source.as_ref().unwrap(),
            ob.shared.source.as_ref().unwrap()
        ));
        assert!(Arc::ptr_eq(
            oa.shared.account.as_ref().unwrap(),
            ob.shared.account.as_ref().unwrap()
        ));
        assert!(Arc::ptr_eq(
            &oa.shared,
            &TraceOutline::of(&a, &mut shared).shared
        ));
        let mut c = a.clone();
        c.project = Some("another".into());
        let oc = TraceOutline::of(&c, &mut shared);
        assert!(!Arc::ptr_eq(&oa.shared, &oc.shared));
        assert_eq!(oc.shared.project.as_deref(), Some("another"));
        assert!(Arc::ptr_eq(
            oa.shared.source.as_ref().unwrap(),
            oc.shared.source.as_ref().unwrap()
        ));
    }

    #[test]
    fn an_outline_kept_reads_back_as_it_was_from_its_file() {
        let mut shared = SharedStrings::default();
        for (calls, seed) in [(6, 1), (1, 3)] {
            let mut t = tracecost_gen::session(calls, seed);
            t.source = Some("in/fleet.jsonl".into());
            t.account = Some("team".into());
            let o = TraceOutline::of(&t, &mut shared);
            let kept = rmp_serde::to_vec(&OutlineRecord::of(&o)).unwrap();
            let back: OutlineRecord = rmp_serde::from_slice(&kept).unwrap();
            assert_eq!(back.outline("in/fleet.jsonl", &mut shared), Some(o));
        }
    }

    #[test]
    fn spilled_outlines_read_back_as_they_were_held() {
        let mut shared = SharedStrings::default();
        let mut outlines = Vec::new();
        for (calls, seed) in [(6, 1), (1, 3), (0, 4), (9, 5)] {
            let mut t = tracecost_gen::session(calls, seed);
            t.source = Some("in/fleet.jsonl".into());
            t.account = Some(format!("team-{}", seed % 2));
            t.session = (seed != 3).then(|| format!("s{seed}"));
            t.project = Some("p".into());
            t.model = "claude-sonnet-4-6".into();
            outlines.push(TraceOutline::of(&t, &mut shared));
        }
        // Heads of every shape: without start times, without calls, and
        // the most calls a packed head holds.
        outlines[1].head.first_start_ms = None;
        outlines[1].head.timestamps = false;
        outlines[1].head.span_ms = None;
        outlines[3].head.calls = (1 << 61) - 1;
        let held = Outlines::in_memory(outlines.clone());
        let spilled = Outlines::spilled(outlines.clone()).unwrap();
        assert_eq!(spilled.len(), 4);
        assert!(spilled.as_slice().is_none());
        for (i, o) in outlines.iter().enumerate() {
            assert_eq!(*spilled.get(i).unwrap(), *o, "outline {i}");
            assert_eq!(*held.get(i).unwrap(), *o);
            assert_eq!(spilled.head(i), o.head);
        }
        // Read back, outlines share their strings as they did, and some
        // did.
        let mut sharing = 0;
        for i in 0..4 {
            for j in 0..i {
                let was = Arc::ptr_eq(&outlines[i].shared, &outlines[j].shared);
                let is = Arc::ptr_eq(
                    &spilled.get(i).unwrap().shared,
                    &spilled.get(j).unwrap().shared,
                );
                assert_eq!(is, was, "outlines {i} and {j}");
                sharing += usize::from(was);
            }
        }
        assert!(sharing > 0 && sharing < 6, "{sharing} pairs share");
        assert!(spilled.get(4).is_err());
        // A head beyond what a packed one holds is refused, not cut.
        outlines[0].head.calls = 1 << 61;
        assert!(Outlines::spilled(outlines).is_err());
    }

    #[test]
    fn a_trace_read_back_takes_the_names_of_its_outline() {
        let mut shared = SharedStrings::default();
        let mut t = tracecost_gen::session(3, 1);
        t.source = Some("a.jsonl".into());
        let mut o = TraceOutline::of(&t, &mut shared);
        o.name = "renamed".into();
        o.session = Some("its-session".into());
        let mut back = tracecost_gen::session(3, 1);
        o.give_names(&mut back);
        assert_eq!(back.name, "renamed");
        assert_eq!(back.session.as_deref(), Some("its-session"));
        assert_eq!(back.source.as_deref(), Some("a.jsonl"));
    }
}
