"""Run with: python3 test_calc.py"""

from calc import average, spread, total


def test_total():
    assert total([1, 2, 3]) == 6


def test_average():
    assert average([2, 4, 6]) == 4, average([2, 4, 6])


def test_spread():
    assert spread([3, 9, 4]) == 6


if __name__ == "__main__":
    for test in (test_total, test_average, test_spread):
        test()
        print(f"ok  {test.__name__}")
    print("all tests passed")
