import ast
import operator

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _eval(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left), _eval(node.right))
    raise ValueError(f"not arithmetic: {ast.dump(node)}")


def evaluate(expression):
    """The value of an arithmetic expression typed by a user (numbers and + - * /)."""
    return _eval(ast.parse(expression, mode="eval").body)
