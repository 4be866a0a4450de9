"""``compressbench flops``: the FLOPs coefficients of a model config, and one case's FLOPs."""

from __future__ import annotations

import argparse
import json
from typing import Any

from compressbench.commands._args import non_negative_int, one_of


def _formulas() -> list[str]:
    from compressbench.flops.formulas import FORMULAS

    return sorted(FORMULAS)


def run(args: argparse.Namespace) -> int:
    from compressbench.errors import InputError
    from compressbench.flops.decoder import DecoderCost
    from compressbench.flops.fields import ConfigFields
    from compressbench.flops.formulas import cost_from_config, detect_formula

    cfg = ConfigFields.load(args.config)
    formula = args.formula or detect_formula(cfg)
    cost = cost_from_config(cfg, formula)
    out: dict[str, Any] = {"config": args.config, "formula": formula, **cost.to_dict()}
    if args.prompt_tokens is not None:
        p, g = args.prompt_tokens, args.output_tokens or 0
        try:
            flops = cost.case(p, g)
        except ValueError as exc:
            raise InputError(f"{exc} (formula {formula})", field="--output-tokens") from None
        out.update(prompt_tokens=p, output_tokens=g)
        if isinstance(cost, DecoderCost):
            out.update(T=max(p + g - 1, 0), Z=g)
        out.update(flops=flops, tflops=flops / 1e12)
    elif args.output_tokens is not None:
        raise InputError("--output-tokens needs --prompt-tokens", field="--output-tokens")
    print(json.dumps(out, indent=2))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "flops",
        help="FLOPs coefficients of a Hugging Face config.json (KEEP-Bench App. C.4)",
        description=(
            "Print the FLOPs coefficients of a model config as one JSON object. Decoder-only: "
            "F = a*T + b*A_inf(T) [+ b_local*A_w(T)] + c*Z with T = P + G - 1, Z = G "
            "(b_local, b_global, window appear when the config has sliding-window layers). "
            "Encoder (BERT): a*l + b*l^2. Encoder-decoder (T5): n = P, r = G. With "
            "--prompt-tokens (and --output-tokens) also the FLOPs of one case."
        ),
    )
    p.add_argument("--config", required=True, help="a Hugging Face config.json")
    p.add_argument(
        "--formula",
        type=one_of(_formulas, "formula"),
        help="decoder | encoder | encoder_decoder | exit (default: from the config)",
    )
    p.add_argument("--prompt-tokens", type=non_negative_int, help="P: prompt tokens of one case")
    p.add_argument("--output-tokens", type=non_negative_int, help="G: output tokens of one case")
    p.set_defaults(func=run)
