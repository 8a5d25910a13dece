"""The CloudFormation functions: those of CloudFormation-format templates
(``Ref``, ``Fn::GetAtt``, ``Fn::FindInMap``, ``Fn::Join``, ``Fn::Select``,
``Fn::Split``, ``Fn::Replace``, ``Fn::Base64``, ``Fn::MemberListToMap``,
``Fn::GetAZs``, and in 2010-09-09 ``Fn::If`` with the condition functions
``Fn::Equals``, ``Fn::Not``, ``Fn::And``, ``Fn::Or``), some of which HOT
2013-05-23 keeps too. A mixin of the ``Resolver``: it uses the resolver's
``resolve``, ``_args`` and HOT functions.
"""
import json
import re

from heatweb.exceptions import InvalidTemplateReference, StackValidationFailed
from stacks.hot.values import UNRESOLVED, ReferenceOnRead, contains_unresolved, join_texts

_MEMBER = re.compile(r"\.member\.([0-9]+)\.(.*)")


class CfnFunctions:
    def fn_fn_join(self, args, path):
        args = self._args(args, path, kind=list, size=(2, 2))
        if args is UNRESOLVED or contains_unresolved(args):
            return UNRESOLVED
        if not isinstance(args[1], list):
            raise StackValidationFailed(f'{path}: "Fn::Join" joins a list')
        return join_texts(str(args[0]), args[1], self.budget, path)

    def fn_fn_select(self, args, path):
        """Heat's Select: an index or key not there (or nothing to select from) is ''."""
        if not isinstance(args, list) or len(args) != 2:
            raise StackValidationFailed(f'{path}: Arguments to "Fn::Select" must be of the '
                                        f'form [index, collection]')
        args = self.resolve(args, path)
        if contains_unresolved(args):
            return UNRESOLVED
        index, items = args
        if items in ("", None):
            return ""
        if isinstance(items, str):
            try:
                items = json.loads(items)
            except ValueError as error:
                raise StackValidationFailed(f'{path}: "Fn::Select": {error}') from None
        if isinstance(items, dict):
            if not isinstance(index, str):
                raise StackValidationFailed(f'{path}: Index to "Fn::Select" must be a string')
            return items.get(index, "")
        if isinstance(items, list):
            try:
                index = int(index)
            except (TypeError, ValueError):
                raise StackValidationFailed(f'{path}: Index to "Fn::Select" must be an '
                                            f'integer') from None
            return items[index] if -len(items) <= index < len(items) else ""
        raise StackValidationFailed(f"{path}: Arguments to Fn::Select not fully resolved")

    def fn_ref(self, name, path):
        """A resource's reference id, else a parameter's value (only parameters in a
        condition), as Heat's Ref."""
        name = self.resolve(name, path)
        if not self.in_conditions and isinstance(name, str) and name in self.template.resources:
            return self.fn_get_resource(name, path)
        if isinstance(name, str) and name in self.params:
            return self.params[name]
        if path.startswith("outputs."):
            raise ReferenceOnRead(resource=name, key="unknown")  # Heat's ParamRef's words
        raise InvalidTemplateReference(resource=name, key=path)

    def fn_fn_getatt(self, args, path):
        if not isinstance(args, list) or len(args) != 2:
            raise StackValidationFailed(f'{path}: Arguments to "Fn::GetAtt" must be of the '
                                        f'form [resource_name, attribute]')
        return self.fn_get_attr(args, path)

    def fn_fn_findinmap(self, args, path):
        if not isinstance(args, list) or len(args) != 3:
            raise StackValidationFailed(f'{path}: Arguments to "Fn::FindInMap" must be of the '
                                        f'form [mapping, key, value]')
        args = self.resolve(args, path)
        if contains_unresolved(args):
            return UNRESOLVED
        value = self.template.mappings
        for step in args:
            if not isinstance(value, dict) or not isinstance(step, (str, int, float)) or \
                    str(step) not in {str(k) for k in value}:
                raise StackValidationFailed(f'{path}: "Fn::FindInMap" found no {step!r} in '
                                            f'{json.dumps(args)}')
            value = next(v for k, v in value.items() if str(k) == str(step))
        return value

    # The conditions of 2010-09-09 are HOT's functions with CloudFormation's names.
    def fn_fn_if(self, args, path):
        return self.fn_if(args, path)

    def fn_fn_equals(self, args, path):
        return self.fn_equals(args, path)

    def fn_fn_not(self, args, path):
        if not isinstance(args, list) or len(args) != 1:
            raise StackValidationFailed(f'{path}: Arguments to "Fn::Not" must be of the '
                                        f'form: [condition]')
        return self.fn_not(args[0], path)

    def fn_fn_and(self, args, path):
        return self.fn_and(args, path)

    def fn_fn_or(self, args, path):
        return self.fn_or(args, path)

    def fn_fn_getazs(self, args, path):
        return ["nova"]  # the one availability zone of this service's clouds

    # Fn::Split and Fn::Replace hand their own (unresolved) arguments to the HOT
    # function, which resolves them once.
    def fn_fn_split(self, args, path):
        if not isinstance(args, list) or len(args) != 2:
            raise StackValidationFailed(f'{path}: Arguments to "Fn::Split" should be: '
                                        f'[delimiter, string]')
        return self.fn_str_split(args, path)

    def fn_fn_replace(self, args, path):
        if not isinstance(args, list) or len(args) != 2:
            raise StackValidationFailed(f'{path}: Arguments to "Fn::Replace" should be: '
                                        f'[{{"token": value, ...}}, string]')
        return self.fn_str_replace({"params": args[0], "template": args[1]}, path)

    def fn_fn_memberlisttomap(self, args, path):
        args = self._args(args, path, kind=list, size=(3, 3))
        if args is UNRESOLVED or contains_unresolved(args):
            return UNRESOLVED
        key_name, value_name, members = args
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            raise StackValidationFailed(f'{path}: "Fn::MemberListToMap" needs a list of '
                                        f'strings')
        # ".member.<N>.<field>=<value>" items; member N gives {its key: its value}.
        by_index = {}
        for member in members:
            field, _, value = member.partition("=")
            found = _MEMBER.match(field)
            if found:
                by_index.setdefault(int(found.group(1)), {})[found.group(2)] = value
        return {fields[key_name]: fields[value_name] for _, fields in sorted(by_index.items())
                if key_name in fields and value_name in fields}

    def fn_fn_base64(self, args, path):
        """A placeholder, as in Heat: UserData is taken as plain text, so nothing is encoded."""
        value = self.resolve(args, path)
        if contains_unresolved(value):
            return UNRESOLVED
        if not isinstance(value, str):
            raise StackValidationFailed(f'{path}: "Fn::Base64" argument must be a string')
        return value
