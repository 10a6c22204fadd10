"""Type stubs of the Rust extension module (``tracecost._native``). The
public API is the pure-Python package around it; these types are what it
passes through."""

from os import PathLike
from typing import List, Optional, Sequence, Tuple, Union

_Path = Union[str, PathLike[str]]
_Marker = Tuple[str, int, Optional[int], str]
_Recorded = Tuple[str, str, str]

VERSION: str
RECALL_TOOL_NAME: str
STUB_FORMAT: str
DEFAULT_LEDGER_THRESHOLD: int
DEFAULT_LEDGER_KEEP_LAST: int

class TracecostError(Exception):
    """Base of every error tracecost raises; the message is the command line's."""

class InputError(TracecostError):
    """Bad input: a trace, log or file that cannot be read, named with the place."""

class ConfigError(InputError):
    """A config string, grid or option that does not parse or cannot apply, or a model with no price."""

class LedgerError(TracecostError):
    """The ledger's storage failed."""

class Ledger:
    @staticmethod
    def in_memory() -> Ledger: ...
    @staticmethod
    def durable(path: _Path) -> Ledger: ...
    @property
    def path(self) -> Optional[str]: ...
    def record(self, tool_call_id: str, tool_name: str, tool_args: str, content: str) -> str: ...
    def get(self, mem_id: str) -> Optional[_Recorded]: ...
    def get_by_call_id(self, tool_call_id: str) -> Optional[_Recorded]: ...
    def execute(self, input_json: str) -> str: ...
    def fetch(
        self,
        mem_id: str,
        format: Optional[str] = None,
        query: Optional[str] = None,
        offset: Optional[int] = None,
        max_chars: Optional[int] = None,
        json_path: Optional[str] = None,
    ) -> str: ...
    def handles(self) -> Optional[List[str]]: ...
    def count(self) -> Optional[int]: ...

class CacheComposition:
    def __init__(
        self,
        history: bool = True,
        manifest: Optional[str] = "cached",
        prompt_region: bool = True,
        ttl: str = "5m",
        provider: str = "anthropic",
    ) -> None: ...
    @property
    def provider(self) -> str: ...
    @property
    def ttl(self) -> str: ...
    def request(
        self, messages: Sequence[str], tools: Sequence[str], system: Sequence[str]
    ) -> Tuple[str, List[_Marker]]: ...

class Compactor:
    def __init__(self, ledger: Ledger, size_threshold: int, keep_last: int) -> None: ...
    def policy(self) -> Tuple[int, int]: ...
    def rewrite(self, messages: Sequence[str]) -> Tuple[List[str], List[str]]: ...
    def request(
        self,
        messages: Sequence[str],
        tools: Sequence[str],
        system: Sequence[str],
        cache: Optional[CacheComposition] = None,
    ) -> Tuple[str, List[str], List[_Marker]]: ...

class Trace:
    """A recorded conversation, loaded or imported."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def provider(self) -> str: ...
    @property
    def project(self) -> Optional[str]: ...
    @property
    def account(self) -> Optional[str]: ...
    @property
    def session(self) -> Optional[str]: ...
    @property
    def status_quo(self) -> str: ...
    @property
    def calls(self) -> int: ...
    @property
    def messages(self) -> int: ...
    def to_json(self) -> str: ...

def stub(handle_json: str) -> str: ...
def derive_handle(tool_call_id: str, tool_name: str, content: str) -> str: ...
def recall_tool_json() -> str: ...
def load(
    paths: Sequence[_Path], from_: Optional[str] = None, skip_invalid: bool = False
) -> Tuple[List[Trace], List[str], List[str]]: ...
def loads(json: str, path: str = "<string>") -> Tuple[List[Trace], List[str]]: ...
def generate(
    name: str,
    calls: Optional[int] = None,
    seed: Optional[int] = None,
    sessions: Optional[int] = None,
    accounts: Optional[int] = None,
    days: Optional[int] = None,
) -> List[Trace]: ...
def canonical_config(config: str) -> str: ...
def grid_configs(
    status_quos: Sequence[str],
    compactions: Optional[Sequence[str]] = None,
    thresholds: Optional[Sequence[int]] = None,
    keep_lasts: Optional[Sequence[int]] = None,
    caches: Optional[Sequence[str]] = None,
    ttl: Optional[str] = None,
    models: Sequence[str] = ...,
) -> List[str]: ...
def replay(
    traces: Sequence[Trace],
    config: Optional[str] = None,
    model: Optional[str] = None,
    pricing: Optional[_Path] = None,
    tokenizer: str = "o200k_base",
    calibrate: str = "auto",
    batch: bool = False,
) -> str: ...
def sweep(
    traces: Sequence[Trace],
    configs: Optional[Sequence[str]] = None,
    compactions: Optional[Sequence[str]] = None,
    thresholds: Optional[Sequence[int]] = None,
    keep_lasts: Optional[Sequence[int]] = None,
    caches: Optional[Sequence[str]] = None,
    ttl: Optional[str] = None,
    models: Sequence[str] = ...,
    baseline: Optional[str] = None,
    recall_cost: Optional[float] = None,
    pricing: Optional[_Path] = None,
    tokenizer: str = "o200k_base",
    calibrate: str = "auto",
    batch: bool = False,
) -> str: ...
