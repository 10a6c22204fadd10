//! Every session's figures, most expensive first ([`SessionList`]): a
//! fleet's answer lists each of its sessions in `results.json`,
//! `sessions.csv` and `sessions/index.html`. Held in memory, that list
//! grows with the fleet (about 600 bytes a session); spilled, it waits in a
//! temporary file and the writers read it back a session at a time, so that
//! a report's memory after the replay does not grow with the fleet either.

use std::borrow::Cow;

use serde::Serialize;
use serde::ser::SerializeSeq;

use crate::AppError;
use crate::spill::{SpillFile, decode_record, encode_record};

use super::session::SessionFigures;

/// Where the figures are, in the order they were added.
#[derive(Debug)]
enum Kept {
    Memory(Vec<SessionFigures>),
    Spilled(SpillFile),
}

/// Every session's figures, most expensive first, then by name: built by
/// [`SessionList::push`] in session-name order and [`SessionList::finish`],
/// then read by [`SessionList::iter`].
#[derive(Debug)]
pub struct SessionList {
    kept: Kept,
    /// Per session added: its status quo's cost, the key it is ordered by.
    costs: Vec<f64>,
    /// The places of the sessions, most expensive first (once finished).
    order: Vec<u32>,
    /// The last session's name added while building, to check they come in
    /// name order (their ties are broken by it).
    last: Option<String>,
}

impl SessionList {
    /// An empty list held in memory, with room for `sessions`.
    pub fn in_memory(sessions: usize) -> Self {
        Self::with(Kept::Memory(Vec::with_capacity(sessions)), sessions)
    }

    /// An empty list written to a temporary file, for `sessions`.
    pub fn spilled(sessions: usize) -> Result<Self, AppError> {
        Ok(Self::with(
            Kept::Spilled(SpillFile::new("sessions", sessions)?),
            sessions,
        ))
    }

    fn with(kept: Kept, sessions: usize) -> Self {
        SessionList {
            kept,
            costs: Vec::with_capacity(sessions),
            order: Vec::new(),
            last: None,
        }
    }

    /// `sessions`, held in memory (in any order): the reference the tests
    /// compare a list built session by session with.
    #[cfg(test)]
    fn from_vec(mut sessions: Vec<SessionFigures>) -> Self {
        sessions.sort_by(|x, y| x.session.cmp(&y.session));
        let mut list = Self::in_memory(sessions.len());
        list.costs = sessions.iter().map(|s| s.status_quo_usd).collect();
        list.kept = Kept::Memory(sessions);
        list.sort();
        list
    }

    /// Adds the next session's figures: sessions come in name order (an
    /// error otherwise: it is the order ties of cost keep).
    pub fn push(&mut self, figures: SessionFigures) -> Result<(), AppError> {
        if self
            .last
            .as_deref()
            .is_some_and(|last| last >= figures.session.as_str())
        {
            return Err(AppError::Internal(format!(
                "session {:?} added after {:?}: sessions come in name order",
                figures.session,
                self.last.as_deref().unwrap_or_default()
            )));
        }
        let place = self.costs.len();
        if u32::try_from(place).is_err() {
            return Err(AppError::Internal(format!(
                "more than {} sessions in one list",
                u32::MAX
            )));
        }
        self.costs.push(figures.status_quo_usd);
        match &mut self.kept {
            Kept::Memory(v) => {
                self.last = Some(figures.session.clone());
                v.push(figures);
            }
            Kept::Spilled(file) => {
                file.put(place, &encode_record(&figures, "a session's figures")?)?;
                self.last = Some(figures.session);
            }
        }
        Ok(())
    }

    /// Ends building: every session added can be read, most expensive
    /// first.
    pub fn finish(&mut self) -> Result<(), AppError> {
        if let Kept::Spilled(file) = &mut self.kept {
            if self.costs.len() != file.len() {
                return Err(AppError::Internal(format!(
                    "{} sessions' figures kept of {}",
                    self.costs.len(),
                    file.len()
                )));
            }
            file.seal()?;
        }
        self.last = None;
        self.sort();
        Ok(())
    }

    /// Orders the places most expensive first; a tie keeps the order they
    /// were added in (name order).
    fn sort(&mut self) {
        let costs = &self.costs;
        // Every place fits in a u32 (checked as each was added).
        let mut order: Vec<u32> = (0..costs.len() as u32).collect();
        order.sort_by(|&x, &y| {
            costs[y as usize]
                .total_cmp(&costs[x as usize])
                .then(x.cmp(&y))
        });
        self.order = order;
        self.costs = Vec::new();
    }

    /// How many sessions.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether there is no session.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The figures of the session at `place` (as added).
    fn at(&self, place: u32) -> Result<Cow<'_, SessionFigures>, AppError> {
        let place = place as usize;
        match &self.kept {
            Kept::Memory(v) => v
                .get(place)
                .map(Cow::Borrowed)
                .ok_or_else(|| AppError::Internal(format!("no figures of session {}", place + 1))),
            Kept::Spilled(file) => decode_record(&file.get(place)?)
                .map(Cow::Owned)
                .map_err(|e| {
                    AppError::Internal(format!(
                        "the figures of session {} read back as: {e}",
                        place + 1
                    ))
                }),
        }
    }

    /// Every session's figures, most expensive first (read back one at a
    /// time when spilled).
    pub fn iter(&self) -> impl Iterator<Item = Result<Cow<'_, SessionFigures>, AppError>> + '_ {
        self.order.iter().map(|&p| self.at(p))
    }

    /// The `n` most expensive sessions' figures (all of them, if fewer).
    pub fn top(&self, n: usize) -> Result<Vec<Cow<'_, SessionFigures>>, AppError> {
        self.iter().take(n).collect()
    }
}

/// Two lists are equal when they list the same figures in the same order,
/// wherever they are kept (one that cannot be read back equals none).
impl PartialEq for SessionList {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|(x, y)| matches!((x, y), (Ok(x), Ok(y)) if x == y))
    }
}

/// Written as the array of every session's figures, most expensive first,
/// read back one at a time.
impl Serialize for SessionList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for figures in self.iter() {
            let figures = figures.map_err(serde::ser::Error::custom)?;
            seq.serialize_element(&*figures)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::{FleetConfig, OwnPick};

    fn figures(session: &str, status_quo_usd: f64, pick: &str) -> SessionFigures {
        SessionFigures {
            session: session.to_owned(),
            project: Some(format!("p-{session}")),
            first_prompt: None,
            started_ms: Some(1_700_000_000_000),
            ended_ms: None,
            traces: vec![session.to_owned(), format!("{session}/agent-1")],
            calls: 3,
            recorded_calls: 1,
            recorded_cost_usd: Some(0.1 + status_quo_usd / 3.0),
            status_quo_usd,
            recommended_usd: status_quo_usd * 0.7,
            savings_usd: status_quo_usd * 0.3,
            savings_pct: 30.0,
            own_pick: OwnPick {
                config: if pick == "mixed" {
                    FleetConfig::Mixed
                } else {
                    FleetConfig::One(pick.parse().unwrap())
                },
                keep_status_quo: false,
                cost_usd: status_quo_usd / 7.0,
                savings_usd: 0.0,
                savings_pct: 0.0,
            },
            parts: Vec::new(),
        }
    }

    proptest::proptest! {
        /// Spilled or in memory, the list reads back every session's figures
        /// as given (every float to the bit), most expensive first and by
        /// name among equals, and serializes to the same bytes.
        #[test]
        fn spilled_and_in_memory_lists_read_back_alike(
            costs in proptest::collection::vec(0u8..6, 0..40),
        ) {
            let given: Vec<SessionFigures> = costs
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let pick = if i % 3 == 0 { "mixed" } else { "ledger:t=2000,k=1+claude-code:ttl=5m" };
                    figures(&format!("s{i:03}"), f64::from(*c) / 3.0, pick)
                })
                .collect();
            let mut spilled = SessionList::spilled(given.len()).unwrap();
            let mut memory = SessionList::in_memory(given.len());
            for f in &given {
                spilled.push(f.clone()).unwrap();
                memory.push(f.clone()).unwrap();
            }
            spilled.finish().unwrap();
            memory.finish().unwrap();
            let mut expected = given.clone();
            expected.sort_by(|x, y| {
                y.status_quo_usd
                    .total_cmp(&x.status_quo_usd)
                    .then_with(|| x.session.cmp(&y.session))
            });
            let read: Vec<SessionFigures> =
                spilled.iter().map(|f| f.unwrap().into_owned()).collect();
            proptest::prop_assert_eq!(&read, &expected);
            proptest::prop_assert!(spilled == memory);
            proptest::prop_assert!(memory == SessionList::from_vec(given.into_iter().rev().collect()));
            proptest::prop_assert_eq!(
                serde_json::to_string_pretty(&spilled).unwrap(),
                serde_json::to_string_pretty(&expected).unwrap()
            );
        }
    }

    #[test]
    fn sessions_out_of_name_order_are_refused() {
        let mut list = SessionList::spilled(2).unwrap();
        list.push(figures("b", 1.0, "mixed")).unwrap();
        let err = list.push(figures("a", 2.0, "mixed")).unwrap_err();
        assert!(err.to_string().contains("name order"), "{err}");
    }

    #[test]
    fn a_spilled_list_missing_sessions_is_an_error() {
        let mut list = SessionList::spilled(2).unwrap();
        list.push(figures("a", 1.0, "mixed")).unwrap();
        assert!(list.finish().is_err());
    }
}
