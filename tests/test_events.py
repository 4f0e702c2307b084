"""Rebuilding multi-line events: tracebacks and their chains, C++ terminate, NCCL runs."""

from __future__ import annotations

from analyzer.choices import InputForm
from analyzer.events import build_events
from analyzer.models import Event, EventKind
from analyzer.readers import parse_lines
from tests.conftest import ROOT


def events(text: str, form: InputForm = InputForm.console) -> list[Event]:
    return build_events(parse_lines(text.encode().split(b"\n"), form))


CHAINED = """INFO starting
Traceback (most recent call last):
  File "/site/flashinfer/compilation_context.py", line 41, in __init__
    major, minor = self._normalize_cuda_arch(major, minor)
RuntimeError: SM 12.x requires CUDA >= 12.9

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/site/flashinfer/jit/core.py", line 108, in check_cuda_arch
    raise RuntimeError("FlashInfer requires GPUs with sm75 or higher")
RuntimeError: FlashInfer requires GPUs with sm75 or higher

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/site/sglang/srt/managers/scheduler.py", line 2871, in run_scheduler_process
    scheduler = Scheduler(server_args)
sglang.srt.errors.SchedulerInitError: scheduler failed to start
INFO after"""


def test_chained_traceback_is_one_event_ending_with_the_last_exception() -> None:
    evs = events(CHAINED)
    tb = [e for e in evs if e.kind is EventKind.traceback]
    assert len(tb) == 1
    assert (tb[0].exc_type, tb[0].exc_message) == ("sglang.srt.errors.SchedulerInitError", "scheduler failed to start")
    assert [f.function for f in tb[0].frames] == ["__init__", "check_cuda_arch", "run_scheduler_process"]
    assert (tb[0].first_line, tb[0].last_line) == (2, 19)
    assert "SM 12.x requires CUDA >= 12.9" in tb[0].text
    assert [e.text for e in evs if e.kind is EventKind.line] == ["INFO starting", "INFO after"]


def test_headless_traceback_from_a_frame_line() -> None:
    text = ('  File "/x/transformers/tokenization_utils_base.py", line 1785, in get_chat_template\n'
            "    raise ValueError(\n"
            "ValueError: Cannot use chat template functions because tokenizer.chat_template is not set")
    (tb,) = events(text)
    assert tb.kind is EventKind.traceback and tb.exc_type == "ValueError"
    assert tb.code_lines == frozenset({1})


def test_a_traceback_ending_in_a_bare_stop_iteration() -> None:
    """`next()` on an exhausted iterator raises StopIteration without a message, so Python ends the
    traceback with the name alone (TransformerEngine 1.13's _load_library when its PyTorch extension is
    not installed, training b36-07); the traceback is complete, not cut before its exception."""
    text = ("Traceback (most recent call last):\n"
            '  File "/env/site-packages/transformer_engine/pytorch/__init__.py", line 52, in _load_library\n'
            '    so_path = next(so_dir.glob(f"{module_name}.*.{extension}"))\n'
            "StopIteration\n"
            "after")
    tb, after = events(text)
    assert (tb.kind, tb.exc_type, tb.exc_message, tb.last_line) == (EventKind.traceback, "StopIteration", None, 4)
    assert after.text == "after"


def test_a_traceback_indented_as_a_whole_by_pip() -> None:
    """pip prints a build's output indented (SteveImmanuel/SegGPT-FineTune#3, as pasted): the
    exception is read at the traceback's own margin, and the traceback ends with it."""
    text = (ROOT / "tests" / "data" / "pastes" / "seggpt-3-pip-indented-traceback.log").read_text()
    [tb] = [e for e in events(text) if e.kind is EventKind.traceback]
    assert (tb.exc_type, tb.exc_message) == ("ModuleNotFoundError", "No module named 'torch'")
    assert (tb.first_line, tb.last_line) == (9, 14) and tb.frames[-1].function == "<module>"
    assert tb.code_lines == frozenset({4})  # "import torch", indented deeper than its frame
    indented = "      Traceback (most recent call last):\n        File \"<string>\", line 2, in <module>\n" \
               "      ZeroDivisionError: frobnicated\n      [end of output]"
    [tb] = events(indented)[:1]
    assert tb.exc_type == "ZeroDivisionError" and tb.code_lines == frozenset()  # right after a frame, not code


def test_traceback_split_into_journal_entries_with_another_process_between() -> None:
    text = "\n".join([
        "May 03 10:00:00 h app[1]: Traceback (most recent call last):",
        'May 03 10:00:00 h app[1]:   File "/a.py", line 1, in f',
        "May 03 10:00:00 h other[2]: unrelated line",
        "May 03 10:00:00 h app[1]:     f()",
        "May 03 10:00:00 h app[1]: KeyError: 'x'",
    ])
    evs = events(text, InputForm.journal_short)
    tb = next(e for e in evs if e.kind is EventKind.traceback)
    assert [r.line for r in tb.records] == [1, 2, 4, 5]
    assert tb.exc_type == "KeyError"
    assert any(e.text == "unrelated line" for e in evs)


def test_cpp_terminate() -> None:
    text = ("terminate called after throwing an instance of 'c10::DistBackendError'\n"
            "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated\n"
            "Aborted (core dumped)")
    evs = events(text)
    assert evs[0].kind is EventKind.cpp_terminate
    assert evs[0].exc_type == "c10::DistBackendError"
    assert evs[0].exc_message is not None and evs[0].exc_message.startswith("[PG ID 0")
    assert evs[-1].text == "Aborted (core dumped)"


def test_nccl_warn_run_is_one_block() -> None:
    text = ("[3] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n"
            "[3] NCCL INFO include/shm.h:41 -> 2\n"
            "[3] include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm (size 9637888)\n"
            "done")
    evs = events(text)
    assert evs[0].kind is EventKind.nccl_block and len(evs[0].records) == 3


def test_kernel_block_from_indented_nvrm_lines() -> None:
    text = ("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
            "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
            "               NVRM: fallen off the bus and is not responding to commands.")
    (ev,) = events(text, InputForm.kernel)
    assert ev.kind is EventKind.kernel_block
    assert ev.text.endswith("fallen off the bus and is not responding to commands.")


# ComfyUI's error dialogs as users paste them from its web page (Comfy-Org/ComfyUI#4578, #4996):
# the older box names no exception type and its frames are not indented; the Error Report is Markdown
COMFY_DIALOG = """Error occurred when executing KSampler:

Some failure nobody has written a pattern for

File "C:\\ComfyUI_windows_portable\\ComfyUI\\execution.py", line 152, in recursive_execute
output_data, output_ui = get_output_data(obj, input_data_all)
^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
File "C:\\ComfyUI_windows_portable\\ComfyUI\\nodes.py", line 1236, in sample
return common_ksampler(model, seed, steps, cfg)
Prompt executed in 0.5 seconds"""

COMFY_REPORT = """# ComfyUI Error Report
## Error Details
- **Node ID:** 8
- **Node Type:** PreviewImage
- **Exception Type:** IndexError
- **Exception Message:** list index out of range
## Stack Trace
```
  File "E:\\ComfyUI\\execution.py", line 327, in execute
    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)

  File "E:\\ComfyUI\\execution.py", line 144, in slice_dict
    return {k: v[i if len(v) > i else -1] for k, v in d.items()}
```
## System Information
- **ComfyUI Version:** 0.3.12"""


def test_an_older_comfyui_dialog_is_one_traceback_with_its_message_and_frames() -> None:
    evs = events(COMFY_DIALOG)
    dialog = evs[0]
    assert dialog.kind is EventKind.traceback
    assert (dialog.first_line, dialog.last_line) == (1, 9)  # the line after the frames is its own
    assert dialog.exc_type is None and dialog.exc_message == "Some failure nobody has written a pattern for"
    assert [f.function for f in dialog.frames] == ["recursive_execute", "sample"]
    assert evs[1].text == "Prompt executed in 0.5 seconds"


def test_a_comfyui_error_report_reads_its_exception_and_stack_trace() -> None:
    evs = events(COMFY_REPORT)
    report = next(e for e in evs if e.kind is EventKind.traceback)
    assert (report.exc_type, report.exc_message) == ("IndexError", "list index out of range")
    assert "IndexError: list index out of range" in report.text.split("\n")  # matched as Python prints it
    assert [f.function for f in report.frames] == ["execute", "slice_dict"]
    assert report.last_line == 14  # the fence's end; the system information is read line by line
    assert any(e.text == "## System Information" and e.kind is EventKind.line for e in evs)
    unfenced = COMFY_REPORT.replace("```\n", "")
    report = next(e for e in events(unfenced) if e.kind is EventKind.traceback)
    assert [f.function for f in report.frames] == ["execute", "slice_dict"]
    assert report.last_line == 12  # up to the next heading


def test_a_comfyui_dialog_without_frames_is_its_heading_and_message() -> None:
    evs = events("Error occurred when executing VAEDecode:\n\nSomething broke\nINFO later")
    assert evs[0].kind is EventKind.traceback and evs[0].exc_message == "Something broke"
    assert evs[0].last_line == 3 and evs[1].text == "INFO later"


def test_torchrun_root_cause_block_is_one_event() -> None:
    """The first failed worker's fields are read together, up to the summary's closing rule;
    the other failures listed above it stay lines of their own."""
    text = (ROOT / "tests" / "data" / "cpu-captures" / "rank-sigkill.log").read_text()
    found = [e for e in events(text) if e.text.startswith("Root Cause (first observed failure):")]
    assert len(found) == 1
    lines = found[0].text.split("\n")
    assert lines[-1] == "  traceback : Signal 9 (SIGKILL) received by PID 19775"
    assert "  exitcode  : -9 (pid: 19775)  (SIGKILL)" in lines and len(lines) == 8
    assert not any("SIGTERM" in line for line in lines)


# rich's boxed traceback (typer and other CLIs): a real paste of mcp-ticketer's CLI given a missing path,
# from its published test report; the narrow terminal wrapped the frame's path and the exception's message
RICH = """╭───────────────────── Traceback (most recent call last) ──────────────────────╮
│ /Users/masa/.local/pipx/venvs/mcp-ticketer/lib/python3.13/site-packages/mcp_ │
│ ticketer/cli/main.py:1935 in mcp_callback                                    │
│                                                                              │
│ ❱ 1935 │   │   │   os.chdir(project_path)                                    │
│                                                                              │
╰──────────────────────────────────────────────────────────────────────────────╯
FileNotFoundError: [Errno 2] No such file or directory:
'/nonexistent/path/that/does/not/exist'"""

# rich's traceback without a box, as Streamlit prints it: the header and the first frame from a real
# Streamlit Cloud paste (copied from a web page, a blank line between lines; a path wrapped), the
# app's frame shortened and the exception line written for this test
RICH_RULE = """────────────────────── Traceback (most recent call last) ───────────────────────

  /home/adminuser/venv/lib/python3.13/site-packages/streamlit/runtime/scriptru

  nner/exec_code.py:129 in exec_func_with_error_handling



  /mount/src/app/streamlit_app.py:71 in <module>

ModuleNotFoundError: No module named 'torch'"""


def test_a_rich_traceback_box_is_one_traceback_with_its_frames_and_exception() -> None:
    evs = events(RICH)
    tb = evs[0]
    assert tb.kind is EventKind.traceback
    assert (tb.first_line, tb.last_line) == (1, 8)
    assert (tb.exc_type, tb.exc_message) == ("FileNotFoundError", "[Errno 2] No such file or directory:")
    assert [(f.file, f.line, f.function) for f in tb.frames] == [("ticketer/cli/main.py", 1935, "mcp_callback")]


def test_a_rich_traceback_without_a_box_is_one_traceback() -> None:
    (tb,) = events(RICH_RULE)
    assert tb.kind is EventKind.traceback
    assert tb.exc_type == "ModuleNotFoundError"
    assert [f.function for f in tb.frames] == ["exec_func_with_error_handling", "<module>"]
    assert tb.frames[-1].file == "/mount/src/app/streamlit_app.py"


# IPython 7's traceback in a notebook: the head of a real paste (CosmiQ/solaris#419), its exception line from the
# thread's title (the stored copy of the paste stops before it)
IPYTHON_OLD = """---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
<ipython-input-8-ac434f9ac605> in <module>()
      5 print('dataset loaded. Running inference on the image.')
      6 start_time = time.time()
----> 7 xdxd_inferer(inf_df)
      8 end_time = time.time()
      9 print('running inference on one image took {} seconds'.format(end_time-start_time))

RuntimeError: CUDA error: no kernel image is available for execution on the device"""

# IPython 8's: the head of a real paste (state-spaces/mamba#85), its exception line from the thread's title
IPYTHON_NEW = """---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
Cell In[2], line 14
      6 x = torch.randn(batch, length, dim).to("cuda")
      7 model = Mamba(
   (...)
     13 ).to("cuda")
---> 14 y = model(x)
     15 assert y.shape == x.shape

File ~/miniconda3/envs/textgen/lib/python3.11/site-packages/torch/nn/modules/module.py:1518, in Module._wrapped_call_impl(self, *args, **kwargs)
   1516     return self._compiled_call_impl(*args, **kwargs)  # type: ignore[misc]
   1517 else:
-> 1518     return self._call_impl(*args, **kwargs)

RuntimeError: CUDA error: no kernel image is available for execution on the device"""


def test_an_ipython_7_traceback_is_one_traceback_with_its_arrow_line() -> None:
    evs = events(IPYTHON_OLD)
    (tb,) = [e for e in evs if e.kind is EventKind.traceback]
    assert (tb.first_line, tb.last_line) == (2, 10)
    assert tb.exc_type == "RuntimeError"
    assert [(f.file, f.line, f.function) for f in tb.frames] == [("<ipython-input-8-ac434f9ac605>", 7, "<module>")]


def test_an_ipython_8_traceback_reads_cells_and_file_rows() -> None:
    evs = events(IPYTHON_NEW)
    (tb,) = [e for e in evs if e.kind is EventKind.traceback]
    assert tb.exc_message == "CUDA error: no kernel image is available for execution on the device"
    assert [(f.line, f.function) for f in tb.frames] == [(14, "<module>"), (1518, "Module._wrapped_call_impl")]


def test_an_ipython_traceback_pasted_from_a_location_row_is_headless() -> None:
    """The same paste started at its second location row (the cell and the header left out)."""
    headless = IPYTHON_NEW[IPYTHON_NEW.index("File ~/"):]
    (tb,) = events(headless)
    assert tb.kind is EventKind.traceback and tb.exc_type == "RuntimeError"
    assert tb.frames[0].file.endswith("torch/nn/modules/module.py")


def test_a_traceback_whose_first_frame_lost_its_start_in_the_paste() -> None:
    """The selection began inside the first frame line ('.../pkg/mod.py", line N, in f', no `File "`):
    that line, the source under it and the exception are still one traceback event, so a pattern
    that needs the frame and the exception together sees both."""
    cut = ('...site-packages\\vllm\\worker\\worker.py", line 117, in determine_num_available_blocks\n'
           "    self.model_runner.profile_run()\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n")
    [tb] = [e for e in events(cut) if e.kind is EventKind.traceback]
    assert tb.first_line == 1 and tb.exc_type == "torch.OutOfMemoryError"
    assert "determine_num_available_blocks" in tb.text
    # a line of that shape with no frame source and no exception after it is no traceback
    assert all(e.kind is EventKind.line for e in events('notes.py", line 3, in main\nall good\n'))
